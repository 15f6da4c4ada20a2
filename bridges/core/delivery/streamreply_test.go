package delivery_test

import (
	"context"
	"errors"
	"testing"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core/delivery"
)

// keyedStream is a bridges.Stream that can stop with a reply's key; each
// StopReply answers the next of errs (nil once they run out).
type keyedStream struct {
	errs  []error
	stops []string // the idem of each StopReply
}

var _ bridges.ReplyStopper = (*keyedStream)(nil)

func (s *keyedStream) Ref() bridges.MessageRef                             { return bridges.MessageRef{ID: "S1"} }
func (s *keyedStream) Append(context.Context, []bridges.StreamChunk) error { return nil }
func (s *keyedStream) Stop(context.Context, []bridges.StreamChunk) error {
	return errors.New("Stop called on a stream that stops with the reply's key")
}

func (s *keyedStream) StopReply(_ context.Context, _ []bridges.StreamChunk, idem string) error {
	s.stops = append(s.stops, idem)
	if len(s.errs) == 0 {
		return nil
	}
	err := s.errs[0]
	s.errs = s.errs[1:]
	return err
}

var errLost = errors.New("connection closed before the answer")

// A streamed reply whose stop failed transiently (its answer lost, or the
// call never made) is stopped again on the retry, with the reply's key,
// and not posted: posting it would show the answer twice when the first
// stop went through, and leave the stream open when it did not. A stream
// that says it is no longer open (the lost stop went through) makes the
// reply a post with Retry set and the reply's key, which the adapter
// looks up first (issue 37).
func TestOutboxStreamReplyStopsAgainThenLooksUp(t *testing.T) {
	for _, tc := range []struct {
		name      string
		errs      []error
		wantStops int
		wantPosts int
	}{
		{"the stop never reached the platform", []error{errLost}, 2, 0},
		{"the stop went through, its answer lost", []error{errLost, bridges.Permanent(errors.New("message_not_in_streaming_state"))}, 2, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			o, h, st := newOutbox(t, "the answer")
			rows, err := st.PendingOutboxForConversation(ctx, h.convID)
			if err != nil || len(rows) != 1 {
				t.Fatal(rows, err)
			}
			s := &keyedStream{errs: tc.errs}
			o.StopStreamInstead(rows[0].ID, delivery.StreamEnd{S: s})
			var posted []bridges.Message
			h.plat.FailPosts(func(_ bridges.ConversationKey, m bridges.Message) error {
				posted = append(posted, m)
				return nil
			})
			o.Flush(ctx)
			for range 3 {
				if !o.Retrying() {
					break
				}
				o.Retry(ctx)
			}
			if len(s.stops) != tc.wantStops || s.stops[0] != rows[0].ID || s.stops[len(s.stops)-1] != rows[0].ID {
				t.Errorf("stops %q, want %d with the reply's key %s", s.stops, tc.wantStops, rows[0].ID)
			}
			if len(posted) != tc.wantPosts {
				t.Fatalf("%d posts, want %d", len(posted), tc.wantPosts)
			}
			if tc.wantPosts > 0 && (!posted[0].Retry || posted[0].Idem != rows[0].ID) {
				t.Errorf("posted %+v, want a retry with the reply's key", posted[0])
			}
			if left, _ := st.PendingOutboxForConversation(ctx, h.convID); len(left) != 0 || h.notices != 0 {
				t.Errorf("%d replies still pending, %d notices: the reply must be done, not given up", len(left), h.notices)
			}
		})
	}
}

// A reply that replaces the live message, whose edit failed transiently
// (the edit may have been made with its answer lost), is edited again on
// the retry rather than posted beside the live message; a live message
// that cannot take it for good (deleted) makes the reply a post.
func TestOutboxLiveReplyEditsAgain(t *testing.T) {
	for _, tc := range []struct {
		name      string
		err       error
		wantEdits int
		wantPosts int
	}{
		{"transient", errLost, 2, 0},
		{"permanent", bridges.Permanent(errors.New("message_not_found")), 1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			o, h, st := newOutbox(t, "the answer")
			live, err := h.plat.Post(ctx, bridges.ConversationKey{Bot: "team", Channel: "C", Thread: "T"}, bridges.Message{Text: "writing…"})
			if err != nil {
				t.Fatal(err)
			}
			live.At = h.now
			rows, _ := st.PendingOutboxForConversation(ctx, h.convID)
			o.EditInstead(rows[0].ID, live)
			edits, posts := 0, 0
			h.plat.FailEdits(func(bridges.MessageRef, bridges.Message) error {
				edits++
				if edits == 1 {
					return tc.err
				}
				return nil
			})
			h.plat.FailPosts(func(bridges.ConversationKey, bridges.Message) error { posts++; return nil })
			o.Flush(ctx)
			for range 3 {
				if !o.Retrying() {
					break
				}
				o.Retry(ctx)
			}
			if edits != tc.wantEdits || posts != tc.wantPosts {
				t.Errorf("%d edits and %d posts, want %d and %d", edits, posts, tc.wantEdits, tc.wantPosts)
			}
			if left, _ := st.PendingOutboxForConversation(ctx, h.convID); len(left) != 0 || h.notices != 0 {
				t.Errorf("%d replies still pending, %d notices", len(left), h.notices)
			}
		})
	}
}
