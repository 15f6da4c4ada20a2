package slack

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/adapters/slack/slackfake"
	"github.com/agentbridge/agentbridge/bridges/kits/platformtest"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/internal/testkit"
)

// TestMain checks for leaked goroutines and, after the tests, that the
// manifest grants the scope of every Web API method they made the adapter
// call (scopes_test.go).
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(scopeCheckingM{m})
}

const waitLong = 5 * time.Second

// stubHandler records what the adapter hands to the core. Like the core,
// it owns a conversation once it accepted a message for it.
type stubHandler struct {
	mu       sync.Mutex
	msgs     []bridges.Inbound
	returned []time.Time // when each accepted HandleMessage returned
	calls    int         // HandleMessage calls, failed ones included
	actions  []bridges.Action
	owned    map[bridges.ConversationKey]bool
	refuse   map[string]bool // users Allowed refuses (strangers)
	failNext int             // fail this many HandleMessage calls
	gate     chan struct{}   // when set, HandleMessage waits for it to close

	platformtest.StateRecorder // the connection states the adapter reports
}

var _ bridges.StateReporter = (*stubHandler)(nil)

func newStub() *stubHandler {
	return &stubHandler{owned: map[bridges.ConversationKey]bool{}, refuse: map[string]bool{}}
}

var errStub = errors.New("stub: database is locked")

func (h *stubHandler) HandleMessage(ctx context.Context, m bridges.Inbound) error {
	h.mu.Lock()
	gate := h.gate
	h.calls++
	h.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.failNext > 0 {
		h.failNext--
		return errStub
	}
	h.msgs = append(h.msgs, m)
	if !h.refuse[m.UserID] { // a stranger's message is refused: no conversation
		h.owned[m.Key] = true
	}
	h.returned = append(h.returned, time.Now())
	return nil
}

func (h *stubHandler) HandleAction(_ context.Context, a bridges.Action) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.actions = append(h.actions, a)
	return nil
}

func (h *stubHandler) Owns(_ context.Context, key bridges.ConversationKey) (bool, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.owned[key], nil
}

func (h *stubHandler) Allowed(_ bridges.ConversationKey, user string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return !h.refuse[user]
}

func (h *stubHandler) messages() []bridges.Inbound {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]bridges.Inbound(nil), h.msgs...)
}

func (h *stubHandler) actionList() []bridges.Action {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]bridges.Action(nil), h.actions...)
}

// messagesFor returns the accepted messages with the given Slack ts.
func (h *stubHandler) messagesFor(ts string) []bridges.Inbound {
	var out []bridges.Inbound
	for _, m := range h.messages() {
		if strings.HasSuffix(m.MsgID, ":"+ts) {
			out = append(out, m)
		}
	}
	return out
}

// env is a running adapter connected to a fake Slack.
type env struct {
	fake *slackfake.Server
	b    *Bridge
	h    *stubHandler
	logs *testkit.SyncBuffer
}

func botConfig(apiURL, botToken string) *config.Bot {
	return &config.Bot{
		Name:     "team",
		Platform: Name,
		Agent:    "coder",
		Settings: &Config{BotToken: botToken, AppToken: slackfake.AppToken, APIURL: apiURL},
	}
}

// newBridge creates an adapter for the fake without running it. At the
// end of the test it checks that no token reached the logs.
func newBridge(t testing.TB, fake *slackfake.Server, botToken string) (*Bridge, *testkit.SyncBuffer) {
	t.Helper()
	logs := &testkit.SyncBuffer{}
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	b, err := New(botConfig(fake.URL(), botToken), logger)
	if err != nil {
		t.Fatal(err)
	}
	b.reconnect = bridges.Backoff{Min: 50 * time.Millisecond, Max: time.Second}
	t.Cleanup(func() {
		b.httpClient.CloseIdleConnections()
		out := logs.String()
		for _, secret := range []string{botToken, slackfake.AppToken, "xoxb-", "xapp-"} {
			if strings.Contains(out, secret) {
				t.Errorf("logs contain a token (%q):\n%s", secret, out)
			}
		}
		if t.Failed() {
			t.Logf("adapter logs:\n%s", out)
		}
	})
	return b, logs
}

// startOnFake runs an adapter against a new fake Slack until the test ends.
func startOnFake(t testing.TB, opts ...slackfake.Option) *env {
	t.Helper()
	fake := newFake(t, opts...)
	b, logs := newBridge(t, fake, slackfake.BotToken)
	h := newStub()
	platformtest.Run(t, b, h, 10*time.Second)
	if err := fake.WaitForConnections(1, waitLong); err != nil {
		t.Fatal(err)
	}
	return &env{fake: fake, b: b, h: h, logs: logs}
}

// settle returns once the adapter has finished every envelope sent
// before it: the adapter handles envelopes one at a time, in order, and
// acks a message only after the core took it, so when a new message is
// acked, all that came before is done (no sleep that may be too short).
func (e *env) settle(t *testing.T) {
	t.Helper()
	e.waitAcked(t, e.fake.Send(slackfake.Msg{Channel: "D9", User: "U1", Text: "settle"}).TS)
}

// waitAcked waits until every envelope about ts is acked.
func (e *env) waitAcked(t *testing.T, ts string) {
	t.Helper()
	testkit.WaitUntil(t, "acks for "+ts, waitLong, func() bool {
		envs := e.fake.EnvelopesFor(ts)
		if len(envs) == 0 {
			return false
		}
		for _, en := range envs {
			if !en.Acked {
				return false
			}
		}
		return true
	})
}
