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
	"github.com/agentbridge/agentbridge/bridges/core/metrics"
	"github.com/agentbridge/agentbridge/bridges/kits/bridgetest"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/store"
)

// host is a conversation for an Outbox: a fake platform, a real store, a
// clock that moves when told, and the retries it was asked to arm.
type host struct {
	logs     bytes.Buffer
	log      *slog.Logger
	convID   string
	bot      *config.Bot
	plat     *bridgetest.Platform
	now      time.Time
	giveUp   time.Duration
	retries  []time.Duration
	backs    int // PlatformBack calls
	notices  int
	budget   delivery.Budget
	interval time.Duration
}

var _ delivery.Host = (*host)(nil)

func (h *host) Log() *slog.Logger          { return h.log }
func (h *host) ConvID() string             { return h.convID }
func (h *host) Bot() *config.Bot           { return h.bot }
func (h *host) Platform() bridges.Platform { return h.plat }
func (h *host) Limits() bridges.Limits     { return h.plat.Limits() }
func (h *host) Now() time.Time             { return h.now }
func (h *host) Metrics() *metrics.Metrics  { return nil }
func (h *host) GiveUpAfter() time.Duration { return h.giveUp }
func (h *host) TakeUrgent()                { h.budget.Take(h.now, h.interval, true) }
func (h *host) MayPost() bool              { return true }

func (h *host) RetryOutboxAfter(d time.Duration) {
	h.retries = append(h.retries, d)
}

func (h *host) PlatformBack() { h.backs++ }

func (h *host) Notice(ctx context.Context, text string) {
	if err := h.PostNotice(ctx, text); err != nil {
		h.log.Warn("post notice", "err", err)
	}
}

func (h *host) PostNotice(ctx context.Context, text string) error {
	h.notices++
	_, err := h.plat.Post(ctx, bridges.ConversationKey{Bot: h.bot.Name, Channel: "C", Thread: "T"}, bridges.Message{Text: text})
	return err
}

func (h *host) EditOrPost(ctx context.Context, ref bridges.MessageRef, m, instead bridges.Message) (bridges.MessageRef, error) {
	return delivery.EditOrPost(ctx, h.plat, h.plat.Limits(), h.now, ref, m, instead)
}

// newOutbox is an outbox of one conversation with replies texts pending.
func newOutbox(t *testing.T, texts ...string) (*delivery.Outbox, *host, *store.Store) {
	t.Helper()
	ctx := context.Background()
	st := bridgetest.OpenStore(t)
	conv, _, err := st.GetOrCreateConversation(ctx, store.ConversationKey{Bot: "team", Channel: "C", Thread: "T"}, "coder", "U1")
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range texts {
		if _, err := st.AddOutbox(ctx, store.OutboxMessage{ConversationID: conv.ID, Text: text}); err != nil {
			t.Fatal(err)
		}
	}
	h := &host{convID: conv.ID, bot: &config.Bot{Name: "team", Platform: "slack"}, now: time.Now(), giveUp: time.Hour,
		interval: time.Second, plat: bridgetest.New(bridges.Limits{Title: "Slack", MaxMessageRunes: 4000})}
	h.log = slog.New(slog.NewTextHandler(&h.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	j := delivery.NewJournal(h.log, func(time.Duration) { t.Error("nothing should wait for the disk") })
	return delivery.NewOutbox(h, st, j, 2*time.Second), h, st
}

func texts(ms []bridgetest.Msg) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Text)
	}
	return out
}

// TestOutboxWaitsOutAnOutageInOrder: a reply that fails for a transient
// reason stays pending and the replies behind it wait (the order holds);
// retries back off from the first delay, doubling up to MaxBackoff; once
// the platform takes posts again, they go in order, each once, the first
// saying it is late, and they are recorded posted.
func TestOutboxWaitsOutAnOutageInOrder(t *testing.T) {
	ctx := context.Background()
	o, h, st := newOutbox(t, "first", "second")
	key := bridges.ConversationKey{Bot: "team", Channel: "C", Thread: "T"}
	attempts := 0
	outage := true
	h.plat.FailPosts(func(_ bridges.ConversationKey, m bridges.Message) error {
		if !outage {
			return nil
		}
		attempts++
		return errors.New("HTTP 503 Service Unavailable")
	})
	o.Flush(ctx)
	for range 8 {
		if !o.Retrying() {
			t.Fatal("no retry scheduled while the platform is down")
		}
		h.now = h.now.Add(h.retries[len(h.retries)-1])
		o.Retry(ctx)
	}
	if attempts != 9 {
		t.Errorf("%d attempts, want 9: only the first reply is tried while it fails", attempts)
	}
	want := []time.Duration{2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second, 32 * time.Second, time.Minute, time.Minute, time.Minute, time.Minute}
	if !slices.Equal(h.retries, want) {
		t.Errorf("retries after %v, want %v", h.retries, want)
	}
	outage = false
	o.Retry(ctx)
	got := texts(h.plat.Messages(key))
	if len(got) != 2 || !strings.HasPrefix(got[0], "first\n\n_(delivered after a Slack outage of ") || got[1] != "second" {
		t.Fatalf("posted %q, want first (marked late) then second", got)
	}
	if o.Retrying() {
		t.Error("a retry is still scheduled after delivery")
	}
	if rows, err := st.PendingOutboxForConversation(ctx, h.convID); err != nil || len(rows) != 0 {
		t.Errorf("pending after delivery: %v, %v", rows, err)
	}
	o.Flush(ctx)
	if n := len(h.plat.Messages(key)); n != 2 {
		t.Errorf("a second flush posted again: %d messages", n)
	}
}

// TestOutboxGivenUpToldOnce: a reply the platform refuses for good is
// given up at once and the next one goes on; when the conversation cannot
// take the notice either, that is logged as an error once, not per reply.
func TestOutboxGivenUpToldOnce(t *testing.T) {
	ctx := context.Background()
	o, h, st := newOutbox(t, "first", "second")
	h.plat.FailPosts(func(bridges.ConversationKey, bridges.Message) error {
		return bridges.Permanent(errors.New("channel_not_found"))
	})
	o.Flush(ctx)
	if o.Retrying() || h.notices != 2 {
		t.Errorf("retrying %v, %d notices; want no retry and a notice per reply", o.Retrying(), h.notices)
	}
	if rows, err := st.PendingOutboxForConversation(ctx, h.convID); err != nil || len(rows) != 0 {
		t.Errorf("pending after giving up: %v, %v", rows, err)
	}
	logs := h.logs.String()
	if n := strings.Count(logs, "reply could not be posted; giving up"); n != 2 {
		t.Errorf("%d replies logged as given up, want 2", n)
	}
	if n := strings.Count(logs, "level=ERROR msg=\"could not tell the conversation that a reply was given up"); n != 1 {
		t.Errorf("the untold notice logged as an error %d times, want once:\n%s", n, logs)
	}
}

// TestOutboxGivesUpAfterWindow: a reply still failing once it is older
// than delivery.give_up_after is given up with a notice naming the
// platform and how long it refused.
func TestOutboxGivesUpAfterWindow(t *testing.T) {
	ctx := context.Background()
	o, h, _ := newOutbox(t, "only")
	key := bridges.ConversationKey{Bot: "team", Channel: "C", Thread: "T"}
	h.plat.FailPosts(func(_ bridges.ConversationKey, m bridges.Message) error {
		if strings.HasPrefix(m.Text, "only") {
			return errors.New("HTTP 503 Service Unavailable")
		}
		return nil
	})
	o.Flush(ctx)
	h.now = h.now.Add(2 * time.Hour)
	o.Retry(ctx)
	got := texts(h.plat.Messages(key))
	if len(got) != 1 || !strings.Contains(got[0], "could not be posted: Slack kept refusing it for ") {
		t.Fatalf("posted %q, want the give-up notice", got)
	}
}

// cutOffPlatform is a platform whose client, like an HTTP client, reports
// the end of the caller's context even when the platform took the post.
type cutOffPlatform struct{ *bridgetest.Platform }

func (p cutOffPlatform) Post(ctx context.Context, key bridges.ConversationKey, m bridges.Message) (bridges.MessageRef, error) {
	ref, err := p.Platform.Post(ctx, key, m)
	if err == nil && ctx.Err() != nil {
		return bridges.MessageRef{}, ctx.Err()
	}
	return ref, err
}

// TestOutboxPostUnderWayOutlivesStop: a post under way when the bridge
// stops finishes and is recorded posted (else the platform has the reply
// and the next run posts it again); the replies behind it are left for
// the next run.
func TestOutboxPostUnderWayOutlivesStop(t *testing.T) {
	o, h, st := newOutbox(t, "first", "second")
	cut := cutOffPlatform{h.plat}
	o = delivery.NewOutbox(&cutHost{host: h, plat: cut}, st, delivery.NewJournal(h.log, func(time.Duration) {}), 2*time.Second)
	ctx, stop := context.WithCancel(context.Background())
	h.plat.FailPosts(func(bridges.ConversationKey, bridges.Message) error {
		stop() // the bridge stops while the post is under way
		return nil
	})
	o.Flush(ctx)
	key := bridges.ConversationKey{Bot: "team", Channel: "C", Thread: "T"}
	if got := texts(h.plat.Messages(key)); !slices.Equal(got, []string{"first"}) {
		t.Fatalf("posted %q, want the reply under way only", got)
	}
	rows, err := st.PendingOutboxForConversation(context.Background(), h.convID)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].Text != "second" || rows[0].Attempts != 0 {
		t.Errorf("pending after the stop: %+v, want only the second reply, untried (the first recorded posted)", rows)
	}
}

// cutHost is host with another platform.
type cutHost struct {
	*host
	plat bridges.Platform
}

func (h *cutHost) Platform() bridges.Platform { return h.plat }

// TestOutboxRecoverPostsAsRetry: replies an earlier owner left pending
// (a previous run, the replica that died holding the conversation) may
// have been in flight without a recorded attempt: Recover posts them as
// retries, so that the adapter looks before posting; a reply of this
// owner's own is not.
func TestOutboxRecoverPostsAsRetry(t *testing.T) {
	ctx := context.Background()
	o, h, st := newOutbox(t, "left by the dead holder")
	var retries []bool
	h.plat.FailPosts(func(_ bridges.ConversationKey, m bridges.Message) error {
		retries = append(retries, m.Retry)
		return nil
	})
	o.Recover(ctx)
	if _, err := st.AddOutbox(ctx, store.OutboxMessage{ConversationID: h.convID, Text: "a reply of this tenure"}); err != nil {
		t.Fatal(err)
	}
	o.Flush(ctx)
	if !slices.Equal(retries, []bool{true, false}) {
		t.Errorf("posted with Retry %v, want [true false]: the inherited reply looks first, the new one does not", retries)
	}
}
