package slack

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/adapters/slack/slackfake"
	"github.com/agentbridge/agentbridge/bridges/kits/bridgetest"
	"github.com/agentbridge/agentbridge/bridges/kits/platformtest"
	"github.com/agentbridge/agentbridge/internal/testkit"
)

// After a "disconnect" envelope or a dropped socket the adapter
// reconnects; messages sent around the break are delivered exactly once.
func TestReconnectDeliversExactlyOnce(t *testing.T) {
	breaks := map[string]func(*slackfake.Server) bool{
		"disconnect envelope": (*slackfake.Server).Disconnect,
		"dropped socket":      (*slackfake.Server).DropSocket,
	}
	for name, brk := range breaks {
		t.Run(name, func(t *testing.T) {
			e := startOnFake(t, slackfake.WithoutEcho())
			before := e.fake.SendMessage("D1", "U1", "before", "")
			e.waitAcked(t, before)

			if !brk(e.fake) {
				t.Fatal("no socket to break")
			}
			during := e.fake.SendMessage("D1", "U1", "during", "") // queued until reconnect
			if err := e.fake.WaitForConnections(2, waitLong); err != nil {
				t.Fatal(err)
			}
			after := e.fake.SendMessage("D1", "U1", "after", "")
			for _, ts := range []string{during, after} {
				e.waitAcked(t, ts)
			}
			for _, ts := range []string{before, during, after} {
				if n := len(e.h.messagesFor(ts)); n != 1 {
					t.Errorf("message %s delivered %d times, want 1", ts, n)
				}
			}
		})
	}
}

// A socket that dies while the core is still accepting a message loses
// the ack; Slack resends the event on the new socket and the adapter
// acks it without delivering it twice.
func TestDroppedSocketMidMessage(t *testing.T) {
	e := startOnFake(t, slackfake.WithoutEcho())
	gate := make(chan struct{})
	e.h.mu.Lock()
	e.h.gate = gate
	e.h.mu.Unlock()
	sent := e.fake.Send(slackfake.Msg{Channel: "D1", User: "U1", Text: "important"})
	testkit.WaitUntil(t, "handler called", waitLong, func() bool {
		e.h.mu.Lock()
		defer e.h.mu.Unlock()
		return e.h.calls == 1
	})
	e.fake.DropSocket()
	if err := e.fake.WaitForConnections(2, waitLong); err != nil {
		t.Fatal(err)
	}
	close(gate)
	testkit.WaitUntil(t, "a retry of the envelope to be acked", waitLong, func() bool {
		for _, en := range e.fake.EnvelopesFor(sent.TS) {
			if en.Retry > 0 && en.Acked {
				return true
			}
		}
		return false
	})
	if n := len(e.h.messagesFor(sent.TS)); n != 1 {
		t.Errorf("delivered %d times, want exactly once", n)
	}
}

// Transient failures of apps.connections.open are retried.
func TestRunRetriesTransientConnectFailures(t *testing.T) {
	fake := newFake(t)
	b, _ := newBridge(t, fake, slackfake.BotToken)
	fake.FailMethod("apps.connections.open", "internal_error", 2)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- b.Run(ctx, newStub()) }()
	if err := fake.WaitForConnections(1, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run = %v after cancel, want nil", err)
	}
	if n := fake.CallCount("apps.connections.open"); n < 3 {
		t.Errorf("%d apps.connections.open calls, want ≥ 3", n)
	}
}

// runBridge runs b with a fresh stub until the test ends; Err on the
// returned Running takes Run's result when it ends by itself.
func runBridge(t *testing.T, b *Bridge) (*stubHandler, *platformtest.Running) {
	t.Helper()
	h := newStub()
	return h, platformtest.Run(t, b, h, 10*time.Second)
}

// Problems that retrying cannot fix end Run with a Failure (wrapping
// ErrFatal) that names the token or scope at fault and says what to do,
// never the token itself. Slack's Socket Mode client would retry a wrong
// kind of app token or a missing scope forever.
func TestRunFailures(t *testing.T) {
	const wrongBot = "xoxb-wrong-token-123"
	tests := []struct {
		name     string
		botToken string
		setup    func(f *slackfake.Server)
		midRun   func(f *slackfake.Server)
		reason   []string
		hint     []string
		statesOK []bridges.ConnState // reported before the failure
	}{
		{
			name: "invalid bot token", botToken: wrongBot,
			reason:   []string{"Slack rejected the bot token", "invalid_auth on auth.test"},
			hint:     []string{"Bot User OAuth Token", "slack.bot_token", "restart"},
			statesOK: []bridges.ConnState{bridges.ConnStarting},
		},
		{
			name:     "revoked bot token",
			setup:    func(f *slackfake.Server) { f.FailMethod("auth.test", "token_revoked", -1) },
			reason:   []string{"the bot token was revoked", "token_revoked"},
			hint:     []string{"reinstall the app", "slack.bot_token"},
			statesOK: []bridges.ConnState{bridges.ConnStarting},
		},
		{
			name:     "inactive account",
			setup:    func(f *slackfake.Server) { f.FailMethod("auth.test", "account_inactive", -1) },
			reason:   []string{"deactivated", "account_inactive"},
			hint:     []string{"active account"},
			statesOK: []bridges.ConnState{bridges.ConnStarting},
		},
		{
			name:     "invalid app token",
			setup:    func(f *slackfake.Server) { f.FailMethod("apps.connections.open", "invalid_auth", -1) },
			reason:   []string{"Slack rejected the app-level token", "apps.connections.open"},
			hint:     []string{"connections:write", "slack.app_token"},
			statesOK: []bridges.ConnState{bridges.ConnStarting},
		},
		{
			name:     "revoked app token",
			setup:    func(f *slackfake.Server) { f.FailMethod("apps.connections.open", "token_revoked", -1) },
			reason:   []string{"the app-level token was revoked"},
			hint:     []string{"App-Level Tokens", "slack.app_token"},
			statesOK: []bridges.ConnState{bridges.ConnStarting},
		},
		{
			name:     "bot token given as the app token",
			setup:    func(f *slackfake.Server) { f.FailMethod("apps.connections.open", "not_allowed_token_type", -1) },
			reason:   []string{"slack.app_token is the wrong kind of token", "not_allowed_token_type"},
			hint:     []string{"xoxb…", "xapp…"},
			statesOK: []bridges.ConnState{bridges.ConnStarting},
		},
		{
			name:     "app token without connections:write",
			setup:    func(f *slackfake.Server) { f.MissingScope("apps.connections.open", "connections:write", -1) },
			reason:   []string{"the app-level token lacks the connections:write scope", "missing_scope"},
			hint:     []string{"connections:write", "slack.app_token"},
			statesOK: []bridges.ConnState{bridges.ConnStarting},
		},
		{
			name: "app uninstalled while running",
			midRun: func(f *slackfake.Server) {
				f.SendEvent(map[string]any{"type": "app_uninstalled"}, "")
			},
			reason:   []string{"revoked the app's tokens", "app_uninstalled"},
			hint:     []string{"reinstall the app"},
			statesOK: []bridges.ConnState{bridges.ConnStarting, bridges.ConnConnected},
		},
		{
			name: "bot token revoked while running",
			midRun: func(f *slackfake.Server) {
				f.SendEvent(map[string]any{"type": "tokens_revoked", "tokens": map[string]any{"oauth": []string{}, "bot": []string{slackfake.BotUserID}}}, "")
			},
			reason:   []string{"tokens_revoked"},
			hint:     []string{"slack.bot_token"},
			statesOK: []bridges.ConnState{bridges.ConnStarting, bridges.ConnConnected},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fake := newFake(t)
			tok := cmp.Or(tc.botToken, slackfake.BotToken)
			b, _ := newBridge(t, fake, tok)
			if tc.setup != nil {
				tc.setup(fake)
			}
			h, done := runBridge(t, b)
			if tc.midRun != nil {
				h.WaitStates(t, 2, waitLong)
				tc.midRun(fake)
			}
			err := done.Err(t)
			if !errors.Is(err, ErrFatal) {
				t.Fatalf("Run = %v, want ErrFatal", err)
			}
			platformtest.WantFailure(t, err, bridges.RemedyRestart, tc.reason, tc.hint)
			for _, secret := range []string{tok, slackfake.AppToken} {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("the error shows a token: %v", err)
				}
			}
			if got := platformtest.StateNames(h.States()); !slices.Equal(got, tc.statesOK) {
				t.Errorf("states before the failure = %v, want %v", got, tc.statesOK)
			}
		})
	}
}

// A tokens_revoked event about another app's bot or user tokens only is
// not this bot's failure.
func TestTokensRevokedForOthersIgnored(t *testing.T) {
	e := startOnFake(t, slackfake.WithoutEcho())
	e.h.WaitStates(t, 2, waitLong)
	id := e.fake.SendEvent(map[string]any{"type": "tokens_revoked", "tokens": map[string]any{"oauth": []string{"U0USER"}, "bot": []string{"UOTHERBOT"}}}, "")
	if _, err := e.fake.WaitForAck(id, waitLong); err != nil {
		t.Fatal(err)
	}
	e.waitAcked(t, e.fake.SendMessage("D1", "U1", "still here", ""))
	if got := platformtest.StateNames(e.h.States()); !slices.Equal(got, []bridges.ConnState{bridges.ConnStarting, bridges.ConnConnected}) {
		t.Errorf("states = %v", got)
	}
}

// The adapter reports starting, connected after Slack's hello,
// reconnecting when the socket drops (attempt 0) and after each failed
// attempt (the count and the error), connected again after the next hello.
// Failed auth.test calls count as attempts too.
func TestConnectionStates(t *testing.T) {
	fake := newFake(t, slackfake.WithoutEcho())
	b, _ := newBridge(t, fake, slackfake.BotToken)
	fake.FailMethod("auth.test", "internal_error", 1)
	h, _ := runBridge(t, b)
	h.WaitStates(t, 3, waitLong)
	fake.FailMethod("apps.connections.open", "internal_error", 2)
	if !fake.DropSocket() {
		t.Fatal("no socket to drop")
	}
	got := h.WaitStates(t, 7, waitLong)
	bridgetest.CheckStates(t, got, []bridgetest.WantState{
		{State: bridges.ConnStarting, Attempt: 0, Reason: ""},
		{State: bridges.ConnReconnecting, Attempt: 1, Reason: "auth.test: internal_error"},
		{State: bridges.ConnConnected, Attempt: 0, Reason: ""},
		{State: bridges.ConnReconnecting, Attempt: 0, Reason: "the Socket Mode connection ended"},
		{State: bridges.ConnReconnecting, Attempt: 1, Reason: "internal_error"},
		{State: bridges.ConnReconnecting, Attempt: 2, Reason: "internal_error"},
		{State: bridges.ConnConnected, Attempt: 0, Reason: ""},
	})
}

// Slack unreachable for ten minutes at start-up (auth.test fails,
// apps.connections.open answers 503) and then for thirty minutes while
// connected (the socket drops, websocket handshakes are refused), in
// virtual time and with the production back-off: Run never gives up; the
// real core shows the bot reconnecting all along, since the start of each
// outage, with the last error and a growing attempt count; no wait
// exceeds the cap; the first attempt after the network's return comes
// within a minute and the bot answers right after — the message sent
// during the outage included (Slack queues it). What must not be lost:
// the bot, and the messages sent during and after the outage.
func TestSocketModeOutagesReconnectForever(t *testing.T) {
	fake := newFake(t, slackfake.WithoutEcho())
	b, _ := newBridge(t, fake, slackfake.BotToken)
	var outage bridgetest.Outage
	b.reconnect = bridges.Backoff{Pause: outage.Pause} // production bounds, virtual time
	fake.FailMethod("auth.test", "internal_error", -1)
	fake.RefuseConnections(-1)
	bot := botConfig(fake.URL(), slackfake.BotToken)
	cfg := bridgetest.Config(t, bot)
	cfg.StatusDelay = time.Hour
	core := bridgetest.RunCore(t, cfg, map[string]bridges.Platform{bot.Name: b}, nil)
	state := bridgetest.BotState(core.Core, bot.Name)
	connected := func(n int) {
		t.Helper()
		if err := fake.WaitForConnections(n, waitLong); err != nil {
			t.Fatal(err)
		}
		testkit.WaitUntil(t, "connected", waitLong, func() bool { return state().State == bridges.ConnConnected })
	}
	answered := func(text string) {
		t.Helper()
		if _, err := fake.WaitForPost(func(m slackfake.Message) bool { return strings.Contains(m.Text, "pong: "+text) }, waitLong); err != nil {
			t.Fatalf("%q not answered after the outage: %v", text, err)
		}
	}

	outage.Begin(core, bot.Name, 10*time.Minute, func() {
		fake.FailMethod("auth.test", "", 0)
		fake.RefuseConnections(0)
	})
	// After a few attempts auth.test works again but Socket Mode does not.
	testkit.WaitUntil(t, "auth.test retried", waitLong, func() bool { return fake.CallCount("auth.test") >= 5 })
	fake.FailMethod("auth.test", "", 0)
	connected(1)
	n := outage.Check(t, bridges.DefaultReconnectMax, time.Minute)
	t.Logf("start-up outage: %d waits, %d auth.test, %d apps.connections.open", n, fake.CallCount("auth.test"), fake.CallCount("apps.connections.open"))
	if fake.CallCount("apps.connections.open") < 2 {
		t.Error("apps.connections.open was never refused")
	}
	fake.SendMessage("D1", "U1", "there?", "")
	answered("there?")

	outage.Begin(core, bot.Name, 30*time.Minute, func() { fake.RefuseSockets(0) })
	fake.RefuseSockets(-1)
	fake.DropSocket()
	fake.SendMessage("D1", "U1", "meanwhile", "") // queued by Slack
	connected(2)
	n = outage.Check(t, bridges.DefaultReconnectMax, time.Minute)
	refused := 0
	for _, c := range fake.Calls() {
		if c.Method == "websocket" {
			refused++
		}
	}
	t.Logf("mid-run outage: %d waits, %d websocket handshakes refused", n, refused)
	if refused < n {
		t.Errorf("%d websocket handshakes refused for %d waits", refused, n)
	}
	answered("meanwhile")
	fake.SendMessage("D1", "U1", "back?", "")
	answered("back?")
	if s := state(); s.State != bridges.ConnConnected || s.Attempt != 0 {
		t.Errorf("state after the outage = %+v", s)
	}
}

// A 429 from apps.connections.open is waited out for at least its
// Retry-After, however short the back-off.
func TestSocketModeRetryAfterRespected(t *testing.T) {
	fake := newFake(t, slackfake.WithoutEcho())
	b, _ := newBridge(t, fake, slackfake.BotToken)
	waits := make(chan time.Duration, 100)
	b.reconnect = bridges.Backoff{Min: time.Millisecond, Max: 2 * time.Millisecond, Pause: func(ctx context.Context, d time.Duration) bool {
		waits <- d
		return ctx.Err() == nil
	}}
	h, _ := runBridge(t, b)
	h.WaitStates(t, 2, waitLong)
	fake.Inject429("apps.connections.open", 1)
	fake.DropSocket()
	if err := fake.WaitForConnections(2, waitLong); err != nil {
		t.Fatal(err)
	}
	select {
	case d := <-waits:
		if d < time.Second {
			t.Errorf("waited %v after a 429 with Retry-After: 1, want ≥ 1s", d)
		}
	default:
		t.Fatal("no wait after the 429")
	}
}
