package delivery

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
)

// postEditor is a minimal Platform that records what it was asked to do;
// with edit false it is not an Editor (see postOnlyPlatform).
type postEditor struct {
	posts []bridges.Message
	edits []bridges.MessageRef
}

func (p *postEditor) Limits() bridges.Limits                           { return bridges.Limits{} }
func (p *postEditor) Run(ctx context.Context, h bridges.Handler) error { return nil }
func (p *postEditor) Post(_ context.Context, key bridges.ConversationKey, m bridges.Message) (bridges.MessageRef, error) {
	p.posts = append(p.posts, m)
	return bridges.MessageRef{Key: key, ID: "new"}, nil
}
func (p *postEditor) Edit(_ context.Context, ref bridges.MessageRef, _ bridges.Message) error {
	p.edits = append(p.edits, ref)
	return nil
}

type postOnlyPlatform struct{ p *postEditor }

func (o postOnlyPlatform) Limits() bridges.Limits                           { return o.p.Limits() }
func (o postOnlyPlatform) Run(ctx context.Context, h bridges.Handler) error { return nil }
func (o postOnlyPlatform) Post(ctx context.Context, key bridges.ConversationKey, m bridges.Message) (bridges.MessageRef, error) {
	return o.p.Post(ctx, key, m)
}

func TestEditOrPost(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	key := bridges.ConversationKey{Bot: "b", Channel: "c"}
	tests := []struct {
		name     string
		editor   bool
		maxAge   time.Duration
		postedAt time.Time
		wantEdit bool
	}{
		{"editor, no limit", true, 0, now.Add(-48 * time.Hour), true},
		{"editor, no limit, unknown age", true, 0, time.Time{}, true},
		{"editor, young", true, 15 * time.Minute, now.Add(-14 * time.Minute), true},
		{"editor, exactly EditMaxAge old", true, 15 * time.Minute, now.Add(-15 * time.Minute), false},
		{"editor, old", true, 15 * time.Minute, now.Add(-time.Hour), false},
		{"editor, limit and unknown age", true, 15 * time.Minute, time.Time{}, false},
		{"not an editor", false, 0, now, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &postEditor{}
			var p bridges.Platform = postOnlyPlatform{rec}
			if tt.editor {
				p = rec
			}
			old := bridges.MessageRef{Key: key, ID: "old", At: tt.postedAt}
			got, err := EditOrPost(context.Background(), p, bridges.Limits{EditMaxAge: tt.maxAge}, now, old,
				bridges.Message{Text: "edited"}, bridges.Message{Text: "instead", ReplyTo: "old"})
			if err != nil {
				t.Fatal(err)
			}
			if tt.wantEdit {
				if len(rec.edits) != 1 || len(rec.posts) != 0 || got != old {
					t.Errorf("edits=%v posts=%v ref=%+v, want one edit of %+v", rec.edits, rec.posts, got, old)
				}
				return
			}
			if len(rec.edits) != 0 || len(rec.posts) != 1 || rec.posts[0].Text != "instead" || rec.posts[0].ReplyTo != "old" {
				t.Fatalf("edits=%v posts=%+v, want one post of the replacement", rec.edits, rec.posts)
			}
			if got.ID != "new" || !got.At.Equal(now) {
				t.Errorf("ref = %+v, want the new message stamped %v", got, now)
			}
		})
	}
}

// An edit that fails is reported, not replaced by a post (the caller
// decides: the outbox retries, a card logs).
func TestEditOrPostEditError(t *testing.T) {
	p := &failingEditor{}
	_, err := EditOrPost(context.Background(), p, bridges.Limits{}, time.Now(), bridges.MessageRef{ID: "x"}, bridges.Message{}, bridges.Message{})
	if !errors.Is(err, errEditBroken) || p.posts != 0 {
		t.Errorf("err = %v, posts = %d", err, p.posts)
	}
}

var errEditBroken = errors.New("edit broken")

type failingEditor struct{ posts int }

func (p *failingEditor) Limits() bridges.Limits                           { return bridges.Limits{} }
func (p *failingEditor) Run(ctx context.Context, h bridges.Handler) error { return nil }
func (p *failingEditor) Post(context.Context, bridges.ConversationKey, bridges.Message) (bridges.MessageRef, error) {
	p.posts++
	return bridges.MessageRef{}, nil
}
func (p *failingEditor) Edit(context.Context, bridges.MessageRef, bridges.Message) error {
	return errEditBroken
}
