package core_test

import (
	"context"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentbridge/agentbridge/agent"
	agentpool "github.com/agentbridge/agentbridge/agent/pool"
	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/bridges/core/agents"
	"github.com/agentbridge/agentbridge/bridges/core/sessiondir"
	"github.com/agentbridge/agentbridge/bridges/core/toolconv"
	"github.com/agentbridge/agentbridge/bridges/kits/bridgetest"
	"github.com/agentbridge/agentbridge/config/profile"
	"github.com/agentbridge/agentbridge/internal/testkit"
	"github.com/agentbridge/agentbridge/store"
)

// warmFakePool is a agents.WarmPool over the fake pool: AcquireNew hands
// out "the spare" (a session with spareID) once, for options without a
// model override, like pool.Pool does for options that match the
// profile's; later new sessions are cold.
type warmFakePool struct {
	*bridgetest.FakePool

	onSend func() // called by sessions from AcquireNew before each Send

	mu       sync.Mutex
	spareID  string
	kept     []agentpool.SpareConfig
	newCalls []agent.Options
	status   agentpool.SpareStatus
}

var _ agents.WarmPool = (*warmFakePool)(nil)

func (p *warmFakePool) KeepSpares(cfg agentpool.SpareConfig) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.kept = append(p.kept, cfg)
}

func (p *warmFakePool) AcquireNew(ctx context.Context, key string, limit agentpool.Limit, opts agent.Options) (agents.Session, string, error) {
	p.mu.Lock()
	p.newCalls = append(p.newCalls, opts)
	if p.spareID != "" && opts.Model == "" {
		opts.SessionID, opts.StateDir = p.spareID, ""
		p.spareID = ""
	}
	p.mu.Unlock()
	s, err := p.FakePool.Acquire(ctx, key, limit, opts)
	if err != nil {
		return nil, "", err
	}
	return checkedSession{s, p.onSend}, opts.SessionID, nil
}

// checkedSession calls check before every Send.
type checkedSession struct {
	agents.Session
	check func()
}

func (c checkedSession) Send(ctx context.Context, m streamjson.UserMessage) error {
	c.check()
	return c.Session.Send(ctx, m)
}

func (p *warmFakePool) SpareStatus(string) agentpool.SpareStatus {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.status
}

func (p *warmFakePool) setStatus(st agentpool.SpareStatus) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.status = st
}

// TestNewConversationTakesWarmSpare: the core keeps the bot profile's warm
// spares while it runs (spawned like a new conversation of the profile), a
// new conversation asks for a new session and, given a spare, records the
// spare's session id before the first message reaches it; the next spawn
// resumes that id in the spare's state directory; !status shows the
// spares, and why they fail when they do.
func TestNewConversationTakesWarmSpare(t *testing.T) {
	spareID := uuid.NewString()
	var (
		mu        sync.Mutex
		h         *harness
		storedIDs []string // the stored session id each time a message is written to the spare
	)
	k := key("t1")
	pool := &warmFakePool{FakePool: bridgetest.NewFakePool(nil), spareID: spareID, onSend: func() {
		mu.Lock()
		defer mu.Unlock()
		c, err := h.st.GetConversation(context.Background(), store.ConversationKey(k))
		if err != nil {
			t.Errorf("read the conversation: %v", err)
		}
		storedIDs = append(storedIDs, c.SessionID)
	}}
	defer pool.Close()
	mu.Lock()
	h = start(t, setup{agents: pool, profile: func(a *profile.Agent) { a.WarmSpares = 1 }})
	mu.Unlock()

	h.send(k, "m1", "alice", "hello")
	h.waitText(k, "pong: hello")
	mu.Lock()
	if !slices.Equal(storedIDs, []string{spareID}) {
		t.Errorf("stored session id when the first message reached the agent: %v, want the spare's %s", storedIDs, spareID)
	}
	mu.Unlock()
	if got := h.conversation(k).SessionID; got != spareID {
		t.Errorf("stored session %s, want %s", got, spareID)
	}
	pool.mu.Lock()
	kept, calls := slices.Clone(pool.kept), slices.Clone(pool.newCalls)
	pool.mu.Unlock()
	if len(kept) != 1 {
		t.Fatalf("KeepSpares calls %+v, want one", kept)
	}
	sc := kept[0]
	if sc.Count != 1 || sc.Limit.Profile != "coder" || sc.Limit.MaxLive != 4 || sc.Limit.IdleTimeout != time.Minute ||
		sc.StateRoot != filepath.Join(h.cfg.DataDir, sessiondir.Dir) || sc.Options.SessionID != "" ||
		sc.Options.Workdir != "/srv/project" || sc.Options.PermissionMode != "default" || !sc.WarmUp {
		t.Errorf("spare config %+v", sc)
	}
	// Spares carry the bridge's tools like conversations do, or no conversation could take one.
	if sc.Options.MCPServers[toolconv.ServerName] == nil || !slices.Equal(sc.Options.AllowedTools, calls[0].AllowedTools) {
		t.Errorf("spare tools %v / allowed %v, conversation allowed %v", sc.Options.MCPServers, sc.Options.AllowedTools, calls[0].AllowedTools)
	}
	if len(calls) != 1 || calls[0].Resume || calls[0].Workdir != sc.Options.Workdir {
		t.Errorf("AcquireNew calls %+v", calls)
	}

	pool.setStatus(agentpool.SpareStatus{Want: 1, Ready: 1})
	h.send(k, "m2", "alice", "!status")
	h.waitText(k, "Session `"+spareID+"`")
	h.waitText(k, "warm spares: 1 of 1 ready")
	pool.setStatus(agentpool.SpareStatus{Want: 1, Ready: 1, WarmUpOff: "the agent env sets CLAUDE_CODE_USE_BEDROCK"})
	h.send(k, "m2b", "alice", "!status")
	h.waitText(k, "warm spares: 1 of 1 ready (without a warm-up turn: the agent env sets CLAUDE_CODE_USE_BEDROCK)")
	pool.setStatus(agentpool.SpareStatus{Want: 3, Ready: 2, Auto: true, Max: 4})
	h.send(k, "m2c", "alice", "!status")
	h.waitText(k, "warm spares (auto, at most 4): 2 of 3 ready")
	pool.setStatus(agentpool.SpareStatus{Want: 1, Auto: true, Max: 4, MemShort: true})
	h.send(k, "m2d", "alice", "!status")
	h.waitText(k, "warm spares (auto, at most 4): 0 of 1 ready (no more start: less than the spare memory available)")
	pool.setStatus(agentpool.SpareStatus{Want: 1, Failures: 3, LastError: "spare exited (crashed, code 1): error: unknown option '--bogus'",
		NextAttempt: time.Now().Add(40 * time.Second)})
	h.send(k, "m3", "alice", "!status")
	h.waitText(k, "failing to start (3 in a row): spare exited (crashed, code 1): error: unknown option '--bogus'; next try in")

	// The process goes (evicted); the next message resumes the spare's session.
	h.pool = pool.FakePool
	h.session(1).Close("evicted")
	h.send(k, "m4", "alice", "again")
	h.waitText(k, "pong: again")
	acq := pool.Acquisitions()
	last := acq[len(acq)-1]
	if !last.Opts.Resume || last.Opts.SessionID != spareID || last.Opts.StateDir != filepath.Join(sc.StateRoot, spareID) {
		t.Errorf("respawn %+v, want a resume of %s in its state dir", last.Opts, spareID)
	}
	pool.mu.Lock()
	if len(pool.newCalls) != 1 {
		t.Errorf("AcquireNew called %d times, want once (resumes use Acquire)", len(pool.newCalls))
	}
	pool.mu.Unlock()

	// Without a spare the pool spawns cold: the id asked for stays.
	k2 := key("t2")
	h.send(k2, "n1", "alice", "hi")
	h.waitText(k2, "pong: hi")
	pool.mu.Lock()
	asked := pool.newCalls[len(pool.newCalls)-1].SessionID
	pool.mu.Unlock()
	if got := h.conversation(k2).SessionID; got != asked || got == spareID {
		t.Errorf("cold conversation stored %s, want %s", got, asked)
	}
	h.stop()
	pool.mu.Lock()
	defer pool.mu.Unlock()
	if n := len(pool.kept); n != 2 || pool.kept[1].Count != 0 {
		t.Errorf("KeepSpares calls %+v: the core stops keeping spares when it stops", pool.kept)
	}
}

// TestAutoWarmSparesConfig: warm_spares: auto reaches the pool as an
// automatic count with max_warm_spares and spare_memory, and stopping
// the core stops it (neither a count nor auto).
func TestAutoWarmSparesConfig(t *testing.T) {
	pool := &warmFakePool{FakePool: bridgetest.NewFakePool(nil), spareID: uuid.NewString()}
	defer pool.Close()
	h := start(t, setup{agents: pool, profile: func(a *profile.Agent) {
		a.WarmSpares, a.WarmSparesAuto, a.MaxWarmSpares, a.SpareMemory = 0, true, 3, 512<<20
	}})
	testkit.WaitUntil(t, "KeepSpares called", waitTimeout, func() bool {
		pool.mu.Lock()
		defer pool.mu.Unlock()
		return len(pool.kept) > 0
	})
	pool.mu.Lock()
	sc := pool.kept[0]
	pool.mu.Unlock()
	if !sc.Auto || sc.Max != 3 || sc.SpareMemory != 512<<20 || sc.Count != 0 || sc.Limit.Profile != "coder" {
		t.Errorf("spare config %+v, want auto with max 3 and 512 MiB", sc)
	}
	h.stop()
	pool.mu.Lock()
	last := pool.kept[len(pool.kept)-1]
	pool.mu.Unlock()
	if last.Auto || last.Count != 0 {
		t.Errorf("after stop the last spare config is %+v, want none kept", last)
	}
}
