package discord

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/adapters/discord/discordfake"
	"github.com/agentbridge/agentbridge/bridges/kits/platformtest"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/internal/testkit"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const (
	botName = "team-discord"
	guild   = "800000000000000001"
	wait    = 10 * time.Second
)

// recorder is a Handler that records what the adapter delivers. Like the
// core, it owns a conversation once a message for it was accepted.
type recorder struct {
	mu          sync.Mutex
	msgs        []bridges.Inbound
	acts        []bridges.Action
	actAt       []time.Time // when HandleAction was called
	owned       map[bridges.ConversationKey]bool
	refuse      map[string]bool // users Allowed refuses (strangers)
	failNext    int             // HandleMessage fails this many times
	failFull    int             // HandleMessage fails this many times with bridges.ErrStorageFull
	actionDelay time.Duration   // HandleAction sleeps this long (a slow core)
	changed     chan struct{}

	platformtest.StateRecorder // the connection states the adapter reports
}

var _ bridges.StateReporter = (*recorder)(nil)

func newRecorder() *recorder {
	return &recorder{owned: map[bridges.ConversationKey]bool{}, refuse: map[string]bool{}, changed: make(chan struct{})}
}

func (r *recorder) notify() {
	close(r.changed)
	r.changed = make(chan struct{})
}

func (r *recorder) HandleMessage(_ context.Context, m bridges.Inbound) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.failNext > 0 {
		r.failNext--
		return errors.New("database is locked")
	}
	if r.failFull > 0 {
		r.failFull--
		return fmt.Errorf("handle message %s: %w: database or disk is full", m.MsgID, bridges.ErrStorageFull)
	}
	r.msgs = append(r.msgs, m)
	if !r.refuse[m.UserID] { // a stranger's message is refused: no conversation
		r.owned[m.Key] = true
	}
	r.notify()
	return nil
}

func (r *recorder) HandleAction(_ context.Context, a bridges.Action) error {
	r.mu.Lock()
	d := r.actionDelay
	r.actAt = append(r.actAt, time.Now())
	r.mu.Unlock()
	time.Sleep(d)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.acts = append(r.acts, a)
	r.notify()
	return nil
}

func (r *recorder) Owns(_ context.Context, k bridges.ConversationKey) (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.owned[k], nil
}

func (r *recorder) Allowed(_ bridges.ConversationKey, user string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return !r.refuse[user]
}

func (r *recorder) messages() []bridges.Inbound {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]bridges.Inbound(nil), r.msgs...)
}

// waitFor waits until cond holds over the recorder's state.
func (r *recorder) waitFor(t *testing.T, what string, cond func(msgs []bridges.Inbound, acts []bridges.Action) bool) {
	t.Helper()
	deadline := time.After(wait)
	for {
		r.mu.Lock()
		ok := cond(r.msgs, r.acts)
		ch := r.changed
		r.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("timed out waiting for %s; delivered: %+v", what, r.messages())
		}
	}
}

// waitMsg waits for the delivery of platform message id and returns it.
func (r *recorder) waitMsg(t *testing.T, id string) bridges.Inbound {
	t.Helper()
	var got bridges.Inbound
	r.waitFor(t, "message "+id, func(msgs []bridges.Inbound, _ []bridges.Action) bool {
		for _, m := range msgs {
			if m.MsgID == id {
				got = m
				return true
			}
		}
		return false
	})
	return got
}

func (r *recorder) waitAction(t *testing.T) bridges.Action {
	t.Helper()
	var got bridges.Action
	r.waitFor(t, "an action", func(_ []bridges.Inbound, acts []bridges.Action) bool {
		if len(acts) > 0 {
			got = acts[0]
			return true
		}
		return false
	})
	return got
}

func testBot(f *discordfake.Fake) *config.Bot {
	return &config.Bot{
		Name:     botName,
		Platform: Name,
		Agent:    "coder",
		Settings: &Config{Token: f.Token(), APIURL: f.URL()},
	}
}

func newTestBridge(t testing.TB, bot *config.Bot) *Bridge {
	t.Helper()
	b, err := New(bot, testkit.Logger(t))
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	b.reconnect = bridges.Backoff{Min: 50 * time.Millisecond, Max: 500 * time.Millisecond}
	b.deliverPause = 10 * time.Millisecond
	return b
}

// running is a Bridge whose Run is in progress, with the recorder it
// reports to.
type running struct {
	*Bridge
	*platformtest.Running
	rec *recorder
}

// runRecorded runs b with a fresh recorder; the test's cleanup stops it
// and fails when Run returned an error.
func runRecorded(t testing.TB, b *Bridge) *running {
	t.Helper()
	rec := newRecorder()
	return &running{Bridge: b, Running: platformtest.Run(t, b, rec, wait), rec: rec}
}

// startReady starts a bridge on f and waits until it is connected.
func startReady(t testing.TB, f *discordfake.Fake) *running {
	t.Helper()
	r := runRecorded(t, newTestBridge(t, testBot(f)))
	waitReady(t, r.Bridge, f)
	return r
}

// waitReady waits until b's gateway connection to f is live and b has
// processed READY (it knows its bot user), failing t after wait.
func waitReady(t testing.TB, b *Bridge, f *discordfake.Fake) {
	t.Helper()
	if err := f.WaitGateway(func(s discordfake.GatewayStats) bool { return s.Live == 1 }, wait); err != nil {
		t.Fatalf("gateway: %v", err)
	}
	// READY is processed by the client just after the fake sent it.
	testkit.WaitUntil(t, "the bot user "+f.BotID()+" from READY", wait, func() bool { return b.BotUserID() == f.BotID() })
}

// countIDs counts deliveries per platform message id.
func countIDs(msgs []bridges.Inbound) map[string]int {
	n := map[string]int{}
	for _, m := range msgs {
		n[m.MsgID]++
	}
	return n
}

func isTooLarge(err error) bool { return errors.Is(err, ErrTooLarge) }
