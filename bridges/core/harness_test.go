package core_test

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/agentbridge/agentbridge/agent/sandbox"
	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core"
	"github.com/agentbridge/agentbridge/bridges/core/agents"
	"github.com/agentbridge/agentbridge/bridges/core/metrics"
	"github.com/agentbridge/agentbridge/bridges/core/ownership"
	"github.com/agentbridge/agentbridge/bridges/core/worker"
	"github.com/agentbridge/agentbridge/bridges/features/agenttools"
	"github.com/agentbridge/agentbridge/bridges/features/cards"
	"github.com/agentbridge/agentbridge/bridges/features/commands"
	"github.com/agentbridge/agentbridge/bridges/features/handoff"
	"github.com/agentbridge/agentbridge/bridges/features/reload"
	"github.com/agentbridge/agentbridge/bridges/features/schedule"
	"github.com/agentbridge/agentbridge/bridges/features/spend"
	"github.com/agentbridge/agentbridge/bridges/features/strangers"
	"github.com/agentbridge/agentbridge/bridges/features/uploads"
	"github.com/agentbridge/agentbridge/bridges/features/worktree"
	"github.com/agentbridge/agentbridge/bridges/kits/bridgetest"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/config/profile"
	"github.com/agentbridge/agentbridge/internal/testkit"
	"github.com/agentbridge/agentbridge/store"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const waitTimeout = 10 * time.Second

// setup describes a test core.
type setup struct {
	script        bridgetest.Script
	limits        bridges.Limits
	verbosity     string
	access        config.Access
	profile       func(*profile.Agent)
	clock         worker.Clock
	dbPath        string
	platform      *bridgetest.Platform
	pool          *bridgetest.FakePool // shared fake pool (the caller closes it)
	agents        agents.Pool          // a real pool instead of a fake one
	outboxBackoff time.Duration
	retireAfter   time.Duration
	queueCapacity int
	metrics       *metrics.Metrics
	// silent hides the platform's optional abilities (Ephemeral, Typer,
	// FileFetcher) from the core, like a platform that has none.
	silent bool
	// noEdit hides the platform's Editor ability (bridgetest.WithoutEdit).
	noEdit bool
	// statusDelay is config status_delay (0: the indicator at once).
	statusDelay time.Duration
	// streaming, when set, is the platform (with the Streamer ability).
	streaming *bridgetest.Streaming
	// configure, when set, changes the config before the core starts
	// (e.g. schedules).
	configure func(*config.Config)
	// sandboxes are CoreOptions.Spawner's (nil: none).
	sandboxes map[string]sandbox.Sandbox
	// live gives the core a *config.Live (harness.live) that a test
	// reloads, instead of the plain config.
	live bool
	// observer is CoreOptions.Observer (nil: none).
	observer worker.Observer
	// ownership is CoreOptions.Ownership (nil: one bridge).
	ownership ownership.Ownership
	// wrap, when set, makes the platform the core sees from the fake
	// (e.g. to add an ability).
	wrap func(*bridgetest.Platform) bridges.Platform
	// noCards leaves CoreOptions.Cards nil (a core without cards).
	noCards bool
}

// harness is a running core over a fake pool, an in-memory platform and a
// real SQLite store.
type harness struct {
	t      *testing.T
	cfg    *config.Config
	live   *config.Live // set with setup.live
	st     *store.Store
	pool   *bridgetest.FakePool
	plat   *bridgetest.Platform
	core   *core.Core
	cancel context.CancelFunc
	done   chan error
	once   sync.Once
	logs   *testkit.SyncBuffer
}

func defaultLimits() bridges.Limits {
	return bridges.Limits{MaxMessageRunes: 4000, CanButtons: true,
		EditInterval: 50 * time.Millisecond, MaxButtons: 25}
}

func start(t *testing.T, s setup) *harness {
	t.Helper()
	if s.limits == (bridges.Limits{}) {
		s.limits = defaultLimits()
	}
	if s.dbPath == "" {
		s.dbPath = filepath.Join(t.TempDir(), "bridge.db")
	}
	agentCfg := &profile.Agent{Name: "coder", Command: "claude", Workdir: "/srv/project", MaxLive: 4,
		IdleTimeout: time.Minute, ApprovalTimeout: 10 * time.Minute, PermissionMode: "default"}
	if s.profile != nil {
		s.profile(agentCfg)
	}
	cfg := &config.Config{
		DataDir: filepath.Dir(s.dbPath), // shared by restarts on the same database, like a real data_dir
		Agents:  map[string]*profile.Agent{"coder": agentCfg},
		Bots: []*config.Bot{{Name: "bot", Platform: "slack", Agent: "coder", Verbosity: cmp.Or(s.verbosity, "compact"),
			Access: s.access}},
		StatusDelay: s.statusDelay,
	}
	if s.configure != nil {
		s.configure(cfg)
	}
	logs := &testkit.SyncBuffer{}
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	ctx := context.Background()
	st, err := store.Open(ctx, s.dbPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	pool := s.pool
	var agentPool agents.Pool = pool
	switch {
	case s.agents != nil:
		agentPool = s.agents
	case pool == nil:
		pool = bridgetest.NewFakePool(s.script)
		agentPool = pool
	}
	plat := s.platform
	if s.streaming != nil {
		plat = s.streaming.Platform
	}
	if plat == nil {
		plat = bridgetest.New(s.limits)
	}
	var src config.Source = cfg
	var live *config.Live
	if s.live {
		live = config.NewLive(cfg, time.Now())
		src = live
	}
	var cs worker.Cards = cards.Feature{}
	if s.noCards {
		cs = nil
	}
	sched := schedule.NewFeature(schedule.Options{Config: src, Store: st, Clock: s.clock, Logger: logger, Metrics: s.metrics})
	cr := core.NewCore(core.CoreOptions{Config: src, Store: st, Pool: agentPool, Logger: logger, Clock: s.clock,
		OutboxBackoff: s.outboxBackoff, RetireIdleAfter: s.retireAfter, QueueCapacity: s.queueCapacity, Metrics: s.metrics,
		Spawner:   agents.Spawner{Containment: agents.Containment{Sandboxes: s.sandboxes}, Worktrees: worktree.New(cfg, s.sandboxes, logger)},
		Spend:     spend.New(src, st, s.metrics),
		Scheduler: sched.Scheduler(), Cards: cs, Commands: commands.NewTable(append([]commands.Command{handoff.Command()}, sched.Commands()...)...),
		Tools: agenttools.New(sched.Tools()...), Observer: s.observer, Ownership: s.ownership, ConvFeatures: []worker.ConvFeature{reload.New()},
		Strangers: strangers.New(logger, clockNow(s.clock), s.metrics), Files: uploads.New(nil)})
	var asPlatform bridges.Platform = plat
	switch {
	case s.wrap != nil:
		asPlatform = s.wrap(plat)
	case s.streaming != nil:
		asPlatform = s.streaming
	case s.silent && s.noEdit:
		asPlatform = struct{ bridges.Platform }{plat}
	case s.silent:
		asPlatform = struct {
			bridges.Platform
			bridges.Editor
		}{plat, plat}
	case s.noEdit:
		asPlatform = bridgetest.WithoutEdit(plat)
	}
	runCtx, cancel := context.WithCancel(ctx)
	h := &harness{t: t, cfg: cfg, live: live, st: st, pool: pool, plat: plat, core: cr, cancel: cancel, done: make(chan error, 1), logs: logs}
	go func() { h.done <- cr.Run(runCtx, map[string]bridges.Platform{"bot": asPlatform}) }()
	t.Cleanup(func() {
		h.stop()
		if s.pool == nil && pool != nil {
			pool.Close()
			h.core.WaitSessionReaders() // a shared pool's owner closes it: goleak checks the rest
		}
		if err := st.Close(); err != nil {
			t.Error(err)
		}
		if t.Failed() {
			t.Logf("core log:\n%s", logs.String())
		}
	})
	return h
}

// stop stops the core and waits for Run to return.
func (h *harness) stop() {
	h.once.Do(func() {
		h.cancel()
		select {
		case err := <-h.done:
			if err != nil {
				h.t.Errorf("Run: %v", err)
			}
		case <-time.After(waitTimeout):
			buf := make([]byte, 1<<20)
			h.t.Errorf("core did not stop; goroutines:\n%s", buf[:runtime.Stack(buf, true)])
		}
	})
}

func key(thread string) bridges.ConversationKey {
	return bridges.ConversationKey{Bot: "bot", Channel: "C1", Thread: thread}
}

// send delivers a message from user (id = name) and fails the test on error.
func (h *harness) send(k bridges.ConversationKey, msgID, user, text string) {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	if err := h.plat.Send(ctx, bridges.Inbound{Key: k, MsgID: msgID, UserID: user, UserName: user, Text: text}); err != nil {
		h.t.Fatalf("send %s: %v", msgID, err)
	}
}

// session waits for the n-th agent session.
func (h *harness) session(n int) *bridgetest.FakeSession {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	s, err := h.pool.WaitSession(ctx, n)
	if err != nil {
		h.t.Fatal(err)
	}
	return s
}

// waitText waits for a message of k containing sub.
func (h *harness) waitText(k bridges.ConversationKey, sub string) bridgetest.Msg {
	h.t.Helper()
	return h.plat.WaitFor(h.t, k, waitTimeout, "a message containing "+sub, func(m bridgetest.Msg) bool {
		return strings.Contains(m.Text, sub)
	})
}

// waitCard waits for an open card (with buttons or a card id and choices).
func (h *harness) waitCard(k bridges.ConversationKey, sub string) bridgetest.Msg {
	h.t.Helper()
	return h.plat.WaitFor(h.t, k, waitTimeout, "a card containing "+sub, func(m bridgetest.Msg) bool {
		return m.CardID != "" && strings.Contains(m.Text, sub)
	})
}

// conversation returns the stored conversation of k.
func (h *harness) conversation(k bridges.ConversationKey) store.Conversation {
	h.t.Helper()
	c, err := h.st.GetConversation(context.Background(), store.ConversationKey(k))
	if err != nil {
		h.t.Fatal(err)
	}
	return c
}

// waitLedgerFinal waits until every message of k is in a final state.
func (h *harness) waitLedgerFinal(k bridges.ConversationKey) {
	h.t.Helper()
	h.waitLedgerFinalWithin(k, waitTimeout)
}

func (h *harness) waitLedgerFinalWithin(k bridges.ConversationKey, timeout time.Duration) {
	h.t.Helper()
	conv := h.conversation(k)
	deadline := time.Now().Add(timeout)
	for {
		und, err := h.st.UndeliveredInbox(context.Background(), conv.ID)
		if err != nil {
			h.t.Fatal(err)
		}
		if len(und) == 0 {
			return
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("ledger of %s still has %d unfinished messages (first: %s %s)", k, len(und), und[0].PlatformMsgID, und[0].State)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitOutboxEmpty waits until no reply is pending.
func (h *harness) waitOutboxEmpty() {
	h.t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for {
		pending, err := h.st.PendingOutbox(context.Background())
		if err != nil {
			h.t.Fatal(err)
		}
		if len(pending) == 0 {
			return
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("outbox still has %d pending replies", len(pending))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func ctxT(t *testing.T) context.Context {
	// A bound against a hang, not a measure of speed: the context often
	// outlives a real CLI turn, which takes far longer than waitTimeout on a
	// loaded machine.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func errorsIs(err, target error) bool { return errors.Is(err, target) }

// streamWords streams "word<i> " deltas through step, one every tick of
// the fake clock, for total, then ends the answer and returns the final
// reply (with its footer).
func (h *harness) streamWords(step chan<- string, clock *bridgetest.FakeClock, k bridges.ConversationKey, total, tick time.Duration) bridgetest.Msg {
	h.t.Helper()
	for i := range int(total / tick) {
		step <- fmt.Sprintf("word%d ", i)
		time.Sleep(time.Millisecond) // let the worker take the delta
		clock.Advance(tick)
	}
	close(step)
	return h.waitText(k, fmt.Sprintf("_%.1fs · $0.0123_", total.Seconds()))
}

// clockNow is c's Now, or time.Now for the core's default clock.
func clockNow(c worker.Clock) func() time.Time {
	if c == nil {
		return time.Now
	}
	return c.Now
}
