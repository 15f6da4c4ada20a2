package delivery_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core/delivery"
	"github.com/agentbridge/agentbridge/bridges/kits/bridgetest"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/store"
)

// memOutbox is an outbox store on the test's clock: a failed attempt is
// stamped with the host's now, so the late note's measure can be set to
// the second.
type memOutbox struct {
	h    *host
	rows []store.OutboxMessage
}

func (m *memOutbox) add(text string, created time.Time) {
	m.rows = append(m.rows, store.OutboxMessage{ID: "o" + text, ConversationID: m.h.convID, Text: text, CreatedAt: created,
		UpdatedAt: created, State: store.OutboxPending,
		Key: store.ConversationKey{Bot: "team", Channel: "C", Thread: "T"}})
}

func (m *memOutbox) PendingOutboxForConversation(context.Context, string) ([]store.OutboxMessage, error) {
	var out []store.OutboxMessage
	for _, r := range m.rows {
		if r.State == store.OutboxPending {
			out = append(out, r)
		}
	}
	return out, nil
}

func (m *memOutbox) mark(id, errText string, state store.OutboxState) (store.OutboxMessage, error) {
	for i := range m.rows {
		if r := &m.rows[i]; r.ID == id {
			r.Attempts++
			r.LastError, r.UpdatedAt, r.State = errText, m.h.now, state
			if r.FirstFailedAt.IsZero() {
				r.FirstFailedAt = m.h.now
			}
			return *r, nil
		}
	}
	return store.OutboxMessage{}, errors.New("no such reply")
}

func (m *memOutbox) MarkOutboxRetry(_ context.Context, id, errText string) (store.OutboxMessage, error) {
	return m.mark(id, errText, store.OutboxPending)
}

func (m *memOutbox) MarkOutboxFailed(_ context.Context, id, errText string) (store.OutboxMessage, error) {
	return m.mark(id, errText, store.OutboxFailed)
}

func (m *memOutbox) MarkOutboxPosted(_ context.Context, id string) error {
	for i := range m.rows {
		if m.rows[i].ID == id {
			m.rows[i].State = store.OutboxPosted
			return nil
		}
	}
	return errors.New("no such reply")
}

// newClockOutbox is an outbox over memOutbox with a fake platform whose
// posts fail while *down.
func newClockOutbox(t *testing.T, down *bool) (*delivery.Outbox, *host, *memOutbox) {
	t.Helper()
	h := &host{convID: "conv-1", bot: &config.Bot{Name: "team", Platform: "slack"},
		now: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC), giveUp: 24 * time.Hour, interval: time.Second,
		plat: bridgetest.New(bridges.Limits{Title: "Slack", MaxMessageRunes: 4000})}
	h.log = slog.New(slog.NewTextHandler(&bytes.Buffer{}, nil))
	h.plat.FailPosts(func(bridges.ConversationKey, bridges.Message) error {
		if *down {
			return errors.New("HTTP 503 Service Unavailable")
		}
		return nil
	})
	m := &memOutbox{h: h}
	j := delivery.NewJournal(h.log, func(time.Duration) { t.Error("nothing should wait for the disk") })
	return delivery.NewOutbox(h, m, j, 2*time.Second), h, m
}

// TestOutboxBackoffResetsAfterDelivery: over several outages, each one's
// retries back off from the first delay again once a delivery got
// through in between, never from where the last outage left off.
func TestOutboxBackoffResetsAfterDelivery(t *testing.T) {
	ctx := context.Background()
	down := true
	o, h, m := newClockOutbox(t, &down)
	for outage, fails := range []int{3, 6, 1, 4} {
		m.add(string(rune('a'+outage)), h.now)
		down = true
		h.retries = nil
		o.Flush(ctx)
		for range fails - 1 {
			h.now = h.now.Add(h.retries[len(h.retries)-1])
			o.Retry(ctx)
		}
		var want []time.Duration
		for d := 2 * time.Second; len(want) < fails; d = min(2*d, delivery.MaxBackoff) {
			want = append(want, d)
		}
		if !slices.Equal(h.retries, want) {
			t.Fatalf("outage %d: retries after %v, want %v (from the first delay again)", outage, h.retries, want)
		}
		down = false
		h.now = h.now.Add(h.retries[len(h.retries)-1])
		o.Retry(ctx)
		if o.Retrying() {
			t.Fatalf("outage %d: still retrying after the delivery", outage)
		}
	}
}

// TestOutboxLateNoteFromFirstFailure: the late note measures the wait
// from the reply's first failed attempt — not from when it was produced,
// nor from its last failed attempt — and appears from lateNoteAfter (30 s)
// on.
func TestOutboxLateNoteFromFirstFailure(t *testing.T) {
	ctx := context.Background()
	key := bridges.ConversationKey{Bot: "team", Channel: "C", Thread: "T"}
	for _, tt := range []struct {
		name     string
		produced time.Duration   // before the first attempt
		fails    []time.Duration // the failed attempts, from the first
		posted   time.Duration   // from the first failed attempt
		late     bool
	}{
		{"produced long ago, failed briefly", 10 * time.Minute, []time.Duration{0}, 20 * time.Second, false},
		{"long outage, last failure just now", 0, []time.Duration{0, time.Minute, 2 * time.Minute, 5 * time.Minute}, 5*time.Minute + 2*time.Second, true},
		{"just under the threshold", 0, []time.Duration{0, 10 * time.Second}, 29 * time.Second, false},
		{"at the threshold", 0, []time.Duration{0, 10 * time.Second}, 30 * time.Second, true},
		{"never failed", time.Hour, nil, 0, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			down := true
			o, h, m := newClockOutbox(t, &down)
			start := h.now
			m.add("reply", start.Add(-tt.produced))
			down = len(tt.fails) > 0
			for _, at := range tt.fails {
				h.now = start.Add(at)
				o.Retry(ctx)
			}
			down = false
			h.now = start.Add(tt.posted)
			o.Retry(ctx)
			got := texts(h.plat.Messages(key))
			if len(got) != 1 || !strings.HasPrefix(got[0], "reply") {
				t.Fatalf("posted %q", got)
			}
			if hasNote := strings.Contains(got[0], "_(delivered after a Slack outage of "); hasNote != tt.late {
				t.Fatalf("posted %q: late note %v, want %v", got[0], hasNote, tt.late)
			}
			if tt.late && !strings.Contains(got[0], "5 min") && tt.posted > time.Minute {
				t.Fatalf("posted %q, want the outage measured from the first failure (5 min)", got[0])
			}
		})
	}
}
