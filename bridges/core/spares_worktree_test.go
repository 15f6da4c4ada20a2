package core_test

import (
	"context"
	"log/slog"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	agentpool "github.com/agentbridge/agentbridge/agent/pool"
	"github.com/agentbridge/agentbridge/agent/sandbox"
	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core"
	"github.com/agentbridge/agentbridge/bridges/core/agents"
	"github.com/agentbridge/agentbridge/bridges/features/agenttools"
	"github.com/agentbridge/agentbridge/bridges/features/cards"
	"github.com/agentbridge/agentbridge/bridges/features/worktree"
	"github.com/agentbridge/agentbridge/bridges/kits/bridgetest"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/config/profile"
	"github.com/agentbridge/agentbridge/store"
)

// TestWarmSparesWithWorktreeProfile: worktree: true on one profile leaves
// warm spares on for that profile and for the other profiles of the same
// bridge (the worktree is a spawn hook, not a wrapper that hides the
// pool's agents.WarmPool ability): the core keeps both profiles' spares, new
// conversations of both ask the pool for a new session that a spare may
// serve, the plain profile's conversation takes its spare, and the
// worktree profile's agent starts in its session's worktree, as does a
// spare of that profile (the hook travels with the spare's options).
func TestWarmSparesWithWorktreeProfile(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	repo := t.TempDir()
	gitT(t, repo, "init", "-q")
	writeFiles(t, map[string]string{filepath.Join(repo, "README.md"): "project\n"})
	gitT(t, repo, "add", ".")
	gitT(t, repo, "commit", "-q", "-m", "init")

	data := t.TempDir()
	newProfile := func(name, workdir string, worktree bool) *profile.Agent {
		return &profile.Agent{Name: name, Command: "claude", Workdir: workdir, MaxLive: 4, IdleTimeout: time.Minute,
			ApprovalTimeout: time.Minute, PermissionMode: "default", WarmSpares: 1, Worktree: worktree, Sandbox: profile.SandboxNone}
	}
	cfg := &config.Config{DataDir: data, Agents: map[string]*profile.Agent{
		"coder": newProfile("coder", repo, true),
		"plain": newProfile("plain", t.TempDir(), false),
	}, Bots: []*config.Bot{
		{Name: "code-bot", Platform: "slack", Agent: "coder", Verbosity: "compact"},
		{Name: "plain-bot", Platform: "slack", Agent: "plain", Verbosity: "compact"},
	}}
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(data, "bridge.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	spareID := uuid.NewString()
	pool := &warmFakePool{FakePool: bridgetest.NewFakePool(nil), spareID: spareID, onSend: func() {}}
	defer pool.Close()
	sandboxes := map[string]sandbox.Sandbox{"coder": sandbox.None{}, "plain": sandbox.None{}}
	log := slog.New(slog.DiscardHandler)
	cr := core.NewCore(core.CoreOptions{Config: cfg, Store: st, Pool: pool, Logger: log,
		Spawner: agents.Spawner{Containment: agents.Containment{Sandboxes: sandboxes}, Worktrees: worktree.New(cfg, sandboxes, log)}, Tools: agenttools.New(), Cards: cards.Feature{}})
	codePlat, plainPlat := bridgetest.New(defaultLimits()), bridgetest.New(defaultLimits())
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- cr.Run(runCtx, map[string]bridges.Platform{"code-bot": codePlat, "plain-bot": plainPlat})
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}()

	// The plain profile's conversation comes first and takes the spare.
	plainKey := bridges.ConversationKey{Bot: "plain-bot", Channel: "C1", Thread: "t1"}
	sendCtx, cancelSend := context.WithTimeout(ctx, waitTimeout)
	defer cancelSend()
	if err := plainPlat.Send(sendCtx, bridges.Inbound{Key: plainKey, MsgID: "p1", UserID: "alice", UserName: "alice", Text: "hello"}); err != nil {
		t.Fatal(err)
	}
	plainPlat.WaitFor(t, plainKey, waitTimeout, "the plain profile's answer", func(m bridgetest.Msg) bool { return strings.HasPrefix(m.Text, "pong: hello") })
	codeKey := bridges.ConversationKey{Bot: "code-bot", Channel: "C2", Thread: "t2"}
	if err := codePlat.Send(sendCtx, bridges.Inbound{Key: codeKey, MsgID: "c1", UserID: "alice", UserName: "alice", Text: "hi"}); err != nil {
		t.Fatal(err)
	}
	codePlat.WaitFor(t, codeKey, waitTimeout, "the worktree profile's answer", func(m bridgetest.Msg) bool { return strings.HasPrefix(m.Text, "pong: hi") })

	pool.mu.Lock()
	kept, calls := slices.Clone(pool.kept), slices.Clone(pool.newCalls)
	pool.mu.Unlock()
	byProfile := map[string]agentpool.SpareConfig{}
	for _, sc := range kept {
		byProfile[sc.Limit.Profile] = sc
	}
	if len(kept) != 2 || byProfile["coder"].Count != 1 || byProfile["plain"].Count != 1 {
		t.Fatalf("KeepSpares calls %+v: want one spare kept for the worktree profile and one for the plain profile", kept)
	}
	if len(calls) != 2 {
		t.Fatalf("AcquireNew calls %+v: want one per new conversation, both profiles", calls)
	}
	if got := store.ConversationKey(plainKey); mustConversation(t, st, got).SessionID != spareID {
		t.Errorf("the plain profile's conversation did not take the warm spare %s", spareID)
	}
	codeSession := mustConversation(t, st, store.ConversationKey(codeKey)).SessionID
	wtPath := filepath.Join(data, worktree.Dir, "coder", codeSession)
	acq := pool.Acquisitions()
	if last := acq[len(acq)-1]; last.Opts.Workdir != wtPath {
		t.Errorf("the worktree profile's agent started in %s, want its worktree %s", last.Opts.Workdir, wtPath)
	}

	// A spare of the worktree profile starts in a worktree of its own
	// session, like agent.Start would run it.
	spare := byProfile["coder"].Options
	if spare.Prepare == nil {
		t.Fatal("the worktree profile's spare options have no spawn hook: a spare would run in the shared workdir")
	}
	spare.SessionID = uuid.NewString()
	got, err := spare.Prepare(ctx, spare)
	if want := filepath.Join(data, worktree.Dir, "coder", spare.SessionID); err != nil || got.Workdir != want {
		t.Errorf("the spare's spawn: workdir %s, %v; want %s", got.Workdir, err, want)
	}
}

func mustConversation(t *testing.T, st *store.Store, k store.ConversationKey) store.Conversation {
	t.Helper()
	c, err := st.GetConversation(context.Background(), k)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
