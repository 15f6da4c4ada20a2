package core_test

// Acceptance tests: the core with the real Claude Code CLI (pool.Pool)
// against the fake Anthropic API (agent/fakemodel) and the in-memory
// platform. They skip when `claude` is not installed, unless CI is set (1, true or yes).

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/agent"
	"github.com/agentbridge/agentbridge/agent/fakemodel"
	"github.com/agentbridge/agentbridge/agent/pool"
	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core/agents"
	"github.com/agentbridge/agentbridge/bridges/core/metrics"
	"github.com/agentbridge/agentbridge/bridges/core/worker"
	"github.com/agentbridge/agentbridge/bridges/kits/bridgetest"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/config/profile"
	"github.com/agentbridge/agentbridge/internal/testkit"
	"github.com/agentbridge/agentbridge/store"
)

// liveTimeout bounds waits involving the real CLI (~0.5 s to spawn on an
// idle machine; the test machine is shared).
const liveTimeout = 90 * time.Second

// countingPool wraps the real pool and counts spawns that resume.
type countingPool struct {
	agents.Pool
	acquires, resumes atomic.Int64
}

func (c *countingPool) Acquire(ctx context.Context, key string, limit pool.Limit, opts agent.Options) (agents.Session, error) {
	c.acquires.Add(1)
	if opts.Resume {
		c.resumes.Add(1)
	}
	return c.Pool.Acquire(ctx, key, limit, opts)
}

// live is a core running real CLIs against a fake model.
type live struct {
	*harness
	srv     *fakemodel.Server
	apool   *pool.Pool
	counted *countingPool
	workdir string
	wait    time.Duration // bounds each wait for the agents (liveTimeout unless set)
}

type liveSetup struct {
	maxLive         int
	approvalTimeout time.Duration
	editInterval    time.Duration
	// Shared between runs of a restart test.
	srv          *fakemodel.Server
	dbPath, home string
	workdir      string
	platform     *bridgetest.Platform
	noAPIKey     bool // the agent gets no ANTHROPIC_API_KEY
	clock        worker.Clock
	configure    func(*config.Config)
	metrics      *metrics.Metrics
	// wait bounds each wait for an answer (default liveTimeout); raise it
	// where many CLIs boot two at a time on a loaded machine.
	wait time.Duration
}

func startLive(t *testing.T, ls liveSetup) *live {
	t.Helper()
	testkit.RequireClaude(t)
	if ls.srv == nil {
		ls.srv = fakemodel.New(t)
	}
	if ls.home == "" {
		ls.home = t.TempDir()
	}
	if ls.workdir == "" {
		ls.workdir = filepath.Join(t.TempDir(), "work")
	}
	if ls.maxLive == 0 {
		ls.maxLive = 4
	}
	if ls.approvalTimeout == 0 {
		ls.approvalTimeout = 10 * time.Minute
	}
	lim := defaultLimits()
	lim.EditInterval = 250 * time.Millisecond
	if ls.editInterval > 0 {
		lim.EditInterval = ls.editInterval
	}
	env := map[string]string{}
	for _, kv := range ls.srv.Env() {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	if ls.noAPIKey {
		delete(env, "ANTHROPIC_API_KEY")
	}
	apool := pool.New(slog.New(slog.NewTextHandler(testkit.LogWriter(t), &slog.HandlerOptions{Level: slog.LevelDebug})))
	counted := &countingPool{Pool: agents.NewPool(apool)}
	h := start(t, setup{
		limits: lim, dbPath: ls.dbPath, platform: ls.platform, agents: counted,
		clock: ls.clock, configure: ls.configure, metrics: ls.metrics,
		access: config.Access{Approvers: []string{"carol"}},
		profile: func(a *profile.Agent) {
			a.Workdir, a.Home, a.Env = ls.workdir, ls.home, env
			a.MaxLive, a.IdleTimeout, a.ApprovalTimeout = ls.maxLive, 0, ls.approvalTimeout
		},
	})
	if ls.wait == 0 {
		ls.wait = liveTimeout
	}
	l := &live{harness: h, srv: ls.srv, apool: apool, counted: counted, workdir: ls.workdir, wait: ls.wait}
	t.Cleanup(func() { l.stop() }) // runs before the harness cleanup: stop the core, then the processes
	return l
}

// stop stops the core and then every agent process.
func (l *live) stop() {
	l.harness.stop()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := l.apool.Close(ctx); err != nil {
		l.t.Errorf("close pool: %v", err)
	}
}

func (l *live) waitLive(k bridges.ConversationKey, sub string) bridgetest.Msg {
	l.t.Helper()
	return l.plat.WaitFor(l.t, k, l.wait, "a message containing "+sub, func(m bridgetest.Msg) bool {
		return strings.Contains(m.Text, sub)
	})
}

// waitReply waits for a finished reply (with its cost footer) containing sub.
func (l *live) waitReply(k bridges.ConversationKey, sub string) bridgetest.Msg {
	l.t.Helper()
	return l.plat.WaitFor(l.t, k, l.wait, "a reply containing "+sub, func(m bridgetest.Msg) bool {
		return strings.Contains(m.Text, sub) && strings.Contains(m.Text, " · $")
	})
}

func (l *live) waitLiveCard(k bridges.ConversationKey, sub string, not ...string) bridgetest.Msg {
	l.t.Helper()
	return l.plat.WaitFor(l.t, k, l.wait, "a card containing "+sub, func(m bridgetest.Msg) bool {
		for _, id := range not {
			if m.CardID == id {
				return false
			}
		}
		return m.CardID != "" && len(m.Buttons) > 0 && strings.Contains(m.Text, sub)
	})
}

// waitFinal waits until the ledger of k has nothing left to do.
func (l *live) waitFinal(k bridges.ConversationKey) {
	l.t.Helper()
	l.waitLedgerFinalWithin(k, l.wait)
}

// userTexts returns the user texts of every model request.
func (l *live) userTexts() [][]string {
	var out [][]string
	for _, r := range l.srv.MessagesRequests() {
		out = append(out, fakemodel.UserTexts(r))
	}
	return out
}

func TestAcceptanceBurstWhileTurnRuns(t *testing.T) {
	t.Parallel()
	l := startLive(t, liveSetup{})
	k := key("burst")
	l.send(k, "m1", "alice", "[slow 30] first")
	l.waitLive(k, "pong") // the first turn is streaming
	l.send(k, "m2", "bob", "second")
	l.send(k, "m3", "alice", "third")
	l.waitLive(k, "pong: [slow 30] first")
	l.waitFinal(k)
	// Both follow-ups reached the model and are answered: on their own or in
	// one reply (the CLI merges a burst that waits behind a turn into one
	// prompt: "pong: second\nthird"). The ledger is final as the turn's
	// reply is recorded, just before it is posted: wait for the posts.
	var replies []string
	answered := func(ms []bridgetest.Msg) bool {
		replies = replies[:0]
		for _, m := range ms {
			if m.Key == k && !strings.Contains(m.Text, "first") {
				replies = append(replies, m.Text)
			}
		}
		all := strings.Join(replies, "\n")
		return strings.Contains(all, "second") && strings.Contains(all, "third")
	}
	l.plat.WaitUntil(t, l.wait, "the replies to second and third", answered)
	all := strings.Join(replies, "\n")
	for _, w := range []string{"second", "third"} {
		if !strings.Contains(all, w) {
			t.Errorf("%q was not answered: %q", w, replies)
		}
		asked := false
		for _, texts := range l.userTexts() {
			if strings.Contains(strings.Join(texts, "\n"), w) {
				asked = true
			}
		}
		if !asked {
			t.Errorf("%q never reached the model", w)
		}
	}
	conv := l.conversation(k)
	for _, id := range []string{"m2", "m3"} {
		if msgState(t, l.st, conv.ID, id) != store.InboxCompleted {
			t.Errorf("%s not completed", id)
		}
	}
}

func TestAcceptanceFiftyConversations(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns 100 CLI processes")
	}
	// Beside the package's other tests, which mostly wait: run alone it
	// made the package's run longer by its whole time.
	t.Parallel()
	// 100 CLI boots, two at a time: minutes on a loaded 2-core machine.
	l := startLive(t, liveSetup{maxLive: 10, wait: 5 * time.Minute})
	const n = 50
	keys := make([]bridges.ConversationKey, n)
	var wg sync.WaitGroup
	for i := range n {
		keys[i] = key(fmt.Sprintf("p%02d", i))
		wg.Go(func() { l.send(keys[i], fmt.Sprint("a", i), fmt.Sprint("user", i), fmt.Sprintf("conv%02d alpha", i)) })
	}
	wg.Wait()
	for i := range n {
		l.waitReply(keys[i], fmt.Sprintf("pong: conv%02d alpha", i))
	}
	// Second round: most processes were evicted (max_live 10) and resume.
	for i := range n {
		wg.Go(func() {
			l.send(keys[i], fmt.Sprint("b", i), fmt.Sprint("user", i), fmt.Sprintf("[echo-history] conv%02d beta", i))
		})
	}
	wg.Wait()
	for i := range n {
		m := l.waitReply(keys[i], "history: ")
		if !strings.Contains(m.Text, fmt.Sprintf("history: conv%02d alpha", i)) {
			t.Errorf("conversation %d sees the wrong history: %q", i, m.Text)
		}
		if strings.Count(m.Text, "conv") != 1 {
			t.Errorf("conversation %d history mixes conversations: %q", i, m.Text)
		}
	}
	t.Logf("%d spawns, %d of them resumed", l.counted.acquires.Load(), l.counted.resumes.Load())
	if l.counted.resumes.Load() == 0 {
		t.Error("no conversation was resumed although max_live is 10 for 50 conversations")
	}
}

func TestAcceptanceOrderAndDuplicates(t *testing.T) {
	t.Parallel()
	l := startLive(t, liveSetup{})
	k := key("order")
	words := []string{"one", "two", "three", "four", "five"}
	for i, w := range words {
		l.send(k, fmt.Sprint("o", i), "alice", w)
	}
	// The same platform message delivered three times at once, and once late.
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() { l.send(k, "dup", "alice", "dupe-check") })
	}
	wg.Wait()
	l.waitFinal(k)
	l.send(k, "dup", "alice", "dupe-check")
	l.waitFinal(k)
	l.send(k, "h", "alice", "[echo-history] check")
	m := l.waitReply(k, "history: ")
	last := -1
	for _, w := range words {
		i := strings.Index(m.Text, w)
		if i <= last {
			t.Fatalf("history out of order at %q: %q", w, m.Text)
		}
		last = i
	}
	if c := strings.Count(m.Text, "dupe-check"); c != 1 {
		t.Errorf("duplicate delivery reached the agent %d times: %q", c, m.Text)
	}
	reqs := l.srv.MessagesRequests()
	if c := strings.Count(strings.Join(fakemodel.UserTexts(reqs[len(reqs)-1]), "\n"), "dupe-check"); c != 1 {
		t.Errorf("the model's conversation holds the duplicated message %d times", c)
	}
}

func TestAcceptanceKillMidTurn(t *testing.T) {
	t.Parallel()
	l := startLive(t, liveSetup{})
	k := key("kill")
	l.send(k, "m0", "alice", "hello before the kill")
	l.waitLive(k, "pong: hello before the kill")
	l.send(k, "m1", "alice", "[bash touch killed.txt]")
	card := l.waitLiveCard(k, "touch killed.txt")
	conv := l.conversation(k)
	s, ok := l.apool.Get(conv.ID)
	if !ok {
		t.Fatal("no live session")
	}
	if err := syscall.Kill(s.PID(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	l.waitLive(k, "stopped unexpectedly")
	l.plat.WaitFor(t, k, liveTimeout, "the card expired", func(m bridgetest.Msg) bool {
		return m.CardID == card.CardID && strings.Contains(m.Text, "Expired: agent restarted") && len(m.Buttons) == 0
	})
	// The resumed session gets the message again and asks again.
	card2 := l.waitLiveCard(k, "touch killed.txt", card.CardID)
	if _, err := l.plat.Click(ctxT(t), k, card2.CardID, bridges.ChoiceAllow, "alice", "alice"); err != nil {
		t.Fatal(err)
	}
	l.waitFinal(k)
	if _, err := os.Stat(filepath.Join(l.workdir, "killed.txt")); err != nil {
		t.Errorf("the re-delivered request did not run: %v", err)
	}
	if l.counted.resumes.Load() < 1 {
		t.Error("the session was not resumed")
	}
	l.send(k, "m2", "alice", "[echo-history] after the kill")
	m := l.waitReply(k, "history: ")
	if c := strings.Count(m.Text, "[agentbridge: your previous turn was interrupted"); c != 1 {
		t.Errorf("the interrupted message was re-delivered %d times: %q", c, m.Text)
	}
	in, err := l.st.InboxByID(ctxT(t), ledgerID(t, l.st, conv.ID, "m1"))
	if err != nil || in.State != store.InboxCompleted || in.Attempts != 1 {
		t.Errorf("ledger = %+v, %v", in, err)
	}
}

func TestAcceptanceRestartOnSameDatabase(t *testing.T) {
	t.Parallel()
	testkit.RequireClaude(t)
	srv := fakemodel.New(t)
	shared := liveSetup{srv: srv, dbPath: filepath.Join(t.TempDir(), "bridge.db"), home: t.TempDir(),
		workdir: filepath.Join(t.TempDir(), "work"), platform: bridgetest.New(defaultLimits())}
	k := key("restart")

	a := startLive(t, shared)
	a.send(k, "m1", "alice", "[slow 40] restart me")
	a.waitLive(k, "pong") // streaming: the turn is under way
	conv := a.conversation(k)
	a.stop() // the bridge goes down mid-turn
	if _, err := a.st.AddOutbox(ctxT(t), store.OutboxMessage{ConversationID: conv.ID, Text: "reply stored before the crash"}); err != nil {
		t.Fatal(err)
	}

	b := startLive(t, shared)
	b.waitLive(k, "reply stored before the crash")
	b.waitLive(k, "your previous turn was interrupted")
	b.waitFinal(k)
	if b.counted.resumes.Load() != 1 {
		t.Errorf("the restarted bridge spawned %d resumed sessions, want 1", b.counted.resumes.Load())
	}
	in, err := b.st.InboxByID(ctxT(t), ledgerID(t, b.st, conv.ID, "m1"))
	if err != nil || in.State != store.InboxCompleted || in.Attempts != 1 {
		t.Errorf("ledger = %+v, %v", in, err)
	}
}

func TestAcceptanceApprovals(t *testing.T) {
	t.Parallel()
	l := startLive(t, liveSetup{})
	k := key("approve")

	// A stranger's click does not decide; the requester's does.
	l.send(k, "m1", "alice", "[bash touch clicked.txt]")
	card := l.waitLiveCard(k, "touch clicked.txt")
	clicked, err := l.plat.Click(ctxT(t), k, card.CardID, bridges.ChoiceAllow, "mallory", "mallory")
	if err != nil {
		t.Fatal(err)
	}
	if r := clicked.WaitReply(t, liveTimeout); !strings.Contains(r, "only @alice") {
		t.Errorf("stranger's reply = %q", r)
	}
	if _, err := os.Stat(filepath.Join(l.workdir, "clicked.txt")); err == nil {
		t.Fatal("the stranger's click ran the command")
	}
	if _, err := l.plat.Click(ctxT(t), k, card.CardID, bridges.ChoiceAllow, "alice", "alice"); err != nil {
		t.Fatal(err)
	}
	l.waitFinal(k)
	if _, err := os.Stat(filepath.Join(l.workdir, "clicked.txt")); err != nil {
		t.Errorf("allowed command did not run: %v", err)
	}

	// Always allow: the same command does not ask again.
	l.send(k, "m2", "bob", "[bash touch always.txt]")
	card = l.waitLiveCard(k, "touch always.txt")
	if _, err := l.plat.Click(ctxT(t), k, card.CardID, bridges.ChoiceAlways, "carol", "carol"); err != nil {
		t.Fatal(err)
	}
	l.waitFinal(k)
	l.send(k, "m3", "bob", "[bash touch always.txt]")
	l.waitFinal(k)
	cards := 0
	for _, m := range l.plat.Messages(k) {
		if m.CardID != "" && strings.Contains(m.Text, "touch always.txt") {
			cards++
		}
	}
	if cards != 1 {
		t.Errorf("%d cards for an always-allowed command, want 1", cards)
	}
	as, _ := l.st.ApprovalsForConversation(ctxT(t), l.conversation(k).ID)
	if len(as) != 2 || as[0].Decision != store.DecisionAllow || as[1].Decision != store.DecisionAlways || as[1].DecidedBy != "carol" {
		t.Errorf("audit = %+v", as)
	}
}

func TestAcceptanceApprovalTimeout(t *testing.T) {
	t.Parallel()
	l := startLive(t, liveSetup{approvalTimeout: 2 * time.Second})
	k := key("timeout")
	l.send(k, "m1", "alice", "[bash touch late.txt]")
	card := l.waitLiveCard(k, "touch late.txt")
	l.plat.WaitFor(t, k, liveTimeout, "the card expired", func(m bridgetest.Msg) bool {
		return m.CardID == card.CardID && strings.Contains(m.Text, "Expired: no answer within 2s")
	})
	l.waitFinal(k)
	if _, err := os.Stat(filepath.Join(l.workdir, "late.txt")); err == nil {
		t.Error("the command ran although nobody approved it")
	}
	found := false
	for _, r := range l.srv.MessagesRequests() {
		for _, m := range r.Messages {
			for _, b := range m.Blocks {
				if strings.Contains(b.Text, "Nobody approved this tool call within 2s") {
					found = true
				}
			}
		}
	}
	if !found {
		t.Error("the model never saw the timeout's deny message")
	}
}

func TestAcceptanceStreamingEdits(t *testing.T) {
	t.Parallel()
	l := startLive(t, liveSetup{editInterval: time.Second})
	k := key("stream")
	start := time.Now()
	l.send(k, "m1", "alice", "[long 3000] [slow 300] [slowms 100] stream")
	l.waitLive(k, "_") // the footer: the turn is over
	l.waitFinal(k)
	took := time.Since(start)
	posts, edits := 0, 0
	for _, c := range l.plat.Calls() {
		if c.Key != k {
			continue
		}
		if c.Op == "post" {
			posts++
		} else {
			edits++
		}
	}
	limit := int(took/time.Second) + 4
	t.Logf("%s stream: %d posts, %d edits (limit %d)", took.Round(time.Millisecond), posts, edits, limit)
	if took < 25*time.Second {
		t.Fatalf("the answer streamed for only %s", took)
	}
	if posts+edits > limit {
		t.Errorf("%d platform calls for a %s answer, want at most %d", posts+edits, took, limit)
	}
	if edits < 10 {
		t.Errorf("only %d edits: not streamed", edits)
	}
}

func msgState(t *testing.T, st *store.Store, convID, platformID string) store.InboxState {
	t.Helper()
	in, err := st.InboxByID(context.Background(), ledgerID(t, st, convID, platformID))
	if err != nil {
		t.Fatal(err)
	}
	return in.State
}

// ledgerID finds the ledger id of a platform message by enqueueing it again
// (a duplicate returns the stored row and changes nothing).
func ledgerID(t *testing.T, st *store.Store, convID, platformID string) string {
	t.Helper()
	m, dup, err := st.Enqueue(context.Background(), store.InboxMessage{ConversationID: convID, PlatformMsgID: platformID})
	if err != nil || !dup {
		t.Fatalf("ledger lookup of %s: dup=%v err=%v", platformID, dup, err)
	}
	return m.ID
}
