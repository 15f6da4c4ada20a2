package core_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core"
	"github.com/agentbridge/agentbridge/bridges/core/worker"
	"github.com/agentbridge/agentbridge/bridges/features/agenttools"
	"github.com/agentbridge/agentbridge/bridges/features/cards"
	"github.com/agentbridge/agentbridge/bridges/features/commands"
	"github.com/agentbridge/agentbridge/bridges/kits/bridgetest"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/config/profile"
	"github.com/agentbridge/agentbridge/internal/testkit"
	"github.com/agentbridge/agentbridge/store"
)

// scriptedPlatform is an adapter that reports the states it is given and
// returns what fail delivers from Run (nil: runs until ctx ends).
type scriptedPlatform struct {
	states chan bridges.BotState
	fail   chan error
}

func newScriptedPlatform() *scriptedPlatform {
	return &scriptedPlatform{states: make(chan bridges.BotState), fail: make(chan error)}
}

func (p *scriptedPlatform) Limits() bridges.Limits {
	return bridges.Limits{MaxMessageRunes: 1000, ReportsState: true}
}

func (p *scriptedPlatform) Run(ctx context.Context, h bridges.Handler) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case s := <-p.states:
			bridges.ReportState(h, s)
		case err := <-p.fail:
			return err
		}
	}
}

func (p *scriptedPlatform) Post(context.Context, bridges.ConversationKey, bridges.Message) (bridges.MessageRef, error) {
	return bridges.MessageRef{}, errors.New("scripted platform posts nothing")
}

// multiBot runs a real core over two bots: "chat" on an in-memory
// platform and "phone" on a scripted one.
type multiBot struct {
	core  *core.Core
	chat  *bridgetest.Platform
	phone *scriptedPlatform
	logs  *testkit.SyncBuffer
	done  chan error
	stop  context.CancelFunc
}

func startMultiBot(t *testing.T, only ...string) *multiBot {
	t.Helper()
	return startMultiBotClock(t, nil, only...)
}

// startMultiBotClock is startMultiBot with the core on clock (nil: real
// time).
func startMultiBotClock(t *testing.T, clock worker.Clock, only ...string) *multiBot {
	t.Helper()
	access := config.Access{Users: []string{"alice", "dave"}, Admins: []string{"dave"}}
	cfg := &config.Config{
		DataDir: t.TempDir(),
		Agents: map[string]*profile.Agent{"coder": {Name: "coder", Command: "claude", Workdir: "/srv/project", MaxLive: 2,
			IdleTimeout: time.Minute, ApprovalTimeout: time.Minute, PermissionMode: "default"}},
		Bots: []*config.Bot{
			{Name: "chat", Platform: "slack", Agent: "coder", Verbosity: "compact", Access: access},
			{Name: "phone", Platform: "whatsapp", Agent: "coder", Verbosity: "compact", Access: access},
		},
	}
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "bridge.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	pool := bridgetest.NewFakePool(bridgetest.Pong)
	logs := &testkit.SyncBuffer{}
	m := &multiBot{chat: bridgetest.New(defaultLimits()), phone: newScriptedPlatform(), logs: logs, done: make(chan error, 1)}
	m.core = core.NewCore(core.CoreOptions{Config: cfg, Store: st, Pool: pool, Clock: clock,
		Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo})), Tools: agenttools.New(), Cards: cards.Feature{}, Commands: commands.NewTable()})
	platforms := map[string]bridges.Platform{"chat": m.chat, "phone": m.phone}
	for _, name := range only {
		platforms = map[string]bridges.Platform{name: platforms[name]}
	}
	ctx, cancel := context.WithCancel(context.Background())
	m.stop = cancel
	go func() { m.done <- m.core.Run(ctx, platforms) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-m.done:
		case <-time.After(waitTimeout):
			t.Error("core did not stop")
		}
		pool.Close()
		if err := st.Close(); err != nil {
			t.Error(err)
		}
		if t.Failed() {
			t.Logf("core log:\n%s", logs.String())
		}
	})
	return m
}

func (m *multiBot) state(t *testing.T, bot string, want bridges.ConnState) bridges.BotStatus {
	t.Helper()
	var got bridges.BotStatus
	testkit.WaitUntil(t, bot+" "+string(want), waitTimeout, func() bool {
		for _, s := range m.core.BotStates() {
			if s.Bot == bot {
				got = s
			}
		}
		return got.State == want
	})
	return got
}

// A permanent failure of one bot stops that bot only: the core marks it
// failed with what to do (logged once), the other bot keeps answering,
// and !status shows the failure to an admin but not to others.
func TestOneBotFailsOthersKeepRunning(t *testing.T) {
	m := startMultiBot(t)
	m.state(t, "chat", bridges.ConnRunning) // the in-memory adapter reports nothing
	m.state(t, "phone", bridges.ConnStarting)
	m.phone.states <- bridges.BotState{State: bridges.ConnConnected}
	m.state(t, "phone", bridges.ConnConnected)
	m.phone.states <- bridges.BotState{State: bridges.ConnReconnecting, Reason: "dial: refused", Attempt: 1}
	m.phone.states <- bridges.BotState{State: bridges.ConnReconnecting, Reason: "dial: refused", Attempt: 2}
	if s := m.state(t, "phone", bridges.ConnReconnecting); s.Attempt != 2 || s.Since.IsZero() {
		t.Errorf("reconnecting state = %+v", s)
	}
	until := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	m.phone.fail <- &bridges.Failure{Reason: "temporarily banned", Remedy: bridges.RemedyWait,
		Hint: "wait until the ban ends", Until: until, Err: errors.New("ban code 101")}
	failed := m.state(t, "phone", bridges.ConnFailed)
	if failed.Remedy != bridges.RemedyWait || !failed.Until.Equal(until) || failed.Reason != "temporarily banned" {
		t.Errorf("failed state = %+v", failed)
	}

	k := bridges.ConversationKey{Bot: "chat", Channel: "C1", Thread: "T1"}
	if err := m.chat.Send(ctxT(t), bridges.Inbound{Key: k, MsgID: "m1", UserID: "alice", UserName: "alice", Text: "still there?"}); err != nil {
		t.Fatal(err)
	}
	m.chat.WaitFor(t, k, waitTimeout, "the other bot's answer", func(msg bridgetest.Msg) bool {
		return strings.Contains(msg.Text, "pong: still there?")
	})
	select {
	case err := <-m.done:
		t.Fatalf("core stopped with one bot left: %v", err)
	default:
	}

	if err := m.chat.Send(ctxT(t), bridges.Inbound{Key: k, MsgID: "s1", UserID: "dave", UserName: "dave", Text: "!status"}); err != nil {
		t.Fatal(err)
	}
	st := m.chat.WaitFor(t, k, waitTimeout, "status for the admin", func(msg bridgetest.Msg) bool {
		return strings.Contains(msg.Text, "📊 Session")
	})
	for _, want := range []string{"connection: running", "bot `phone`: failed: temporarily banned — wait until the ban ends (until 2026-03-01T12:00:00Z)"} {
		if !strings.Contains(st.Text, want) {
			t.Errorf("admin's !status lacks %q:\n%s", want, st.Text)
		}
	}
	if err := m.chat.Send(ctxT(t), bridges.Inbound{Key: k, MsgID: "s2", UserID: "alice", UserName: "alice", Text: "!status"}); err != nil {
		t.Fatal(err)
	}
	var forAlice bridgetest.Msg
	testkit.WaitUntil(t, "status for alice", waitTimeout, func() bool {
		n := 0
		for _, msg := range m.chat.Messages(k) {
			if strings.Contains(msg.Text, "📊 Session") {
				n++
				forAlice = msg
			}
		}
		return n == 2
	})
	if strings.Contains(forAlice.Text, "phone") {
		t.Errorf("a non-admin learns of another bot:\n%s", forAlice.Text)
	}
	if n := strings.Count(m.logs.String(), "bot stopped"); n != 1 {
		t.Errorf("the failure was logged %d times, want once:\n%s", n, m.logs.String())
	}
	if n := strings.Count(m.logs.String(), "lost its connection"); n != 1 {
		t.Errorf("reconnecting was logged %d times, want once (state changes only)", n)
	}
}

// When every bot has failed there is nothing left to serve: Run returns
// their errors. A plain error (no Failure) says to fix it and restart.
func TestAllBotsFailedEndsRun(t *testing.T) {
	m := startMultiBot(t, "phone")
	m.state(t, "phone", bridges.ConnStarting)
	m.phone.fail <- errors.New("bad token")
	select {
	case err := <-m.done:
		if err == nil || !strings.Contains(err.Error(), "platform of bot phone: bad token") {
			t.Errorf("Run = %v", err)
		}
		m.done <- err // for the cleanup
	case <-time.After(waitTimeout):
		t.Fatal("Run did not end when its only bot failed")
	}
	s := m.core.BotStates()
	if len(s) != 1 || s[0].State != bridges.ConnFailed || s[0].Remedy != bridges.RemedyRestart || s[0].Reason != "bad token" {
		t.Errorf("states = %+v", s)
	}
}

// A long outage: the bot is reconnecting since the connection was lost
// (not since the last attempt), with the count of failed attempts and the
// last error, in BotStates (/healthz, the operator view) and in an
// admin's !status; the next connection clears it.
func TestReconnectingSinceStartOfOutage(t *testing.T) {
	clock := bridgetest.NewFakeClock(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	m := startMultiBotClock(t, clock)
	m.state(t, "phone", bridges.ConnStarting)
	m.phone.states <- bridges.BotState{State: bridges.ConnConnected}
	m.state(t, "phone", bridges.ConnConnected)
	clock.Advance(time.Minute)
	lost := clock.Now()
	m.phone.states <- bridges.BotState{State: bridges.ConnReconnecting, Reason: "the gateway connection dropped"}
	var s bridges.BotStatus
	for i := 1; i <= 7; i++ {
		m.state(t, "phone", bridges.ConnReconnecting) // recorded before the clock moves on
		clock.Advance(2 * time.Minute)
		m.phone.states <- bridges.BotState{State: bridges.ConnReconnecting, Reason: fmt.Sprintf("dial: refused (%d)", i), Attempt: i}
		testkit.WaitUntil(t, fmt.Sprintf("attempt %d", i), waitTimeout, func() bool {
			for _, b := range m.core.BotStates() {
				if b.Bot == "phone" {
					s = b
				}
			}
			return s.Attempt == i
		})
	}
	if !s.Since.Equal(lost) || s.Reason != "dial: refused (7)" {
		t.Errorf("reconnecting state = %+v, want since %v with the last error", s, lost)
	}

	k := bridges.ConversationKey{Bot: "chat", Channel: "C1", Thread: "T1"}
	if err := m.chat.Send(ctxT(t), bridges.Inbound{Key: k, MsgID: "s1", UserID: "dave", UserName: "dave", Text: "!status"}); err != nil {
		t.Fatal(err)
	}
	st := m.chat.WaitFor(t, k, waitTimeout, "status for the admin", func(msg bridgetest.Msg) bool {
		return strings.Contains(msg.Text, "📊 Session")
	})
	want := "bot `phone`: reconnecting since 2026-03-01 09:01:00 UTC (14m ago, 7 failed attempts); last error: dial: refused (7)"
	if !strings.Contains(st.Text, want) {
		t.Errorf("admin's !status lacks %q:\n%s", want, st.Text)
	}

	m.phone.states <- bridges.BotState{State: bridges.ConnConnected}
	if s := m.state(t, "phone", bridges.ConnConnected); !s.Since.Equal(clock.Now()) || s.Attempt != 0 || s.Reason != "" {
		t.Errorf("connected again: %+v", s)
	}
}
