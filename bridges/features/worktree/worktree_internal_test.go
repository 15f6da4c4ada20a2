package worktree

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/bridges/core/sessiondir"
	"github.com/agentbridge/agentbridge/config/profile"

	"github.com/agentbridge/agentbridge/agent"
	"github.com/agentbridge/agentbridge/agent/sandbox"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/internal/testkit"
	"github.com/agentbridge/agentbridge/store"
)

// testRepo creates a git repository with one commit (README and
// sub/file.txt) and returns its directory.
func testRepo(t *testing.T) string {
	t.Helper()
	testkit.NeedTool(t, "git", "apt-get install git")
	dir := filepath.Join(t.TempDir(), "repo")
	for _, f := range []string{"README", "sub/file.txt"} {
		p := filepath.Join(dir, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("original "+f+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	runGit(t, dir, "init", "-q")
	runGit(t, dir, "add", ".")
	runGit(t, dir, "commit", "-qm", "init")
	return dir
}

// runGit runs git in dir as a test user and returns its output.
func runGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "init.defaultBranch=main"}, args...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

const testSession = "0123abcd-1111-4222-8333-444455556666"

// testGit is the bridge's git for worktrees of the test: confined by
// bubblewrap, hiding hide (data_dir, the config file).
func testGit(t *testing.T, hide ...string) worktreeGit {
	t.Helper()
	testkit.NeedBwrap(t)
	return worktreeGit{sb: &sandbox.Bwrap{}, hide: hide}
}

// forEachSandbox runs f as a subtest with the bridge's git confined by
// bubblewrap, and unconfined (sandbox: none).
func forEachSandbox(t *testing.T, f func(t *testing.T, g func(hide ...string) worktreeGit)) {
	t.Run("bwrap", func(t *testing.T) {
		f(t, func(hide ...string) worktreeGit { return testGit(t, hide...) })
	})
	t.Run("none", func(t *testing.T) {
		f(t, func(hide ...string) worktreeGit { return worktreeGit{sb: sandbox.None{}, hide: hide} })
	})
}

func TestLocateWorktree(t *testing.T) {
	repo := testRepo(t)
	data := t.TempDir()

	w, err := locateWorktree(&profile.Agent{Name: "coder", Workdir: filepath.Join(repo, "sub")}, data, testSession)
	if err != nil {
		t.Fatal(err)
	}
	realRepo, _ := filepath.EvalSymlinks(repo)
	if w.repo != realRepo && w.repo != repo {
		t.Errorf("repo = %s, want %s", w.repo, repo)
	}
	if w.rel != "sub" || w.branch != "agentbridge/0123abcd" || w.path != filepath.Join(data, "worktrees", "coder", testSession) ||
		!strings.HasSuffix(w.gitDir, "/.git") || w.exists() {
		t.Errorf("worktree = %+v", w)
	}

	plain := t.TempDir()
	for _, dir := range []string{plain, filepath.Join(plain, "missing")} {
		if _, err := locateWorktree(&profile.Agent{Name: "coder", Workdir: dir}, data, testSession); !errors.Is(err, errNotRepo) {
			t.Errorf("workdir %s: err = %v, want errNotRepo", dir, err)
		}
	}
	for _, bad := range []string{"", "../x", "."} {
		if _, err := locateWorktree(&profile.Agent{Name: "coder", Workdir: repo}, data, bad); err == nil {
			t.Errorf("session id %q accepted", bad)
		}
	}
}

// TestWorktreeLifecycle: create on a new branch from HEAD, clean/dirty,
// retire keeps a dirty one, removes a clean one with its branch, and keeps
// a branch with commits.
func TestWorktreeLifecycle(t *testing.T) {
	forEachSandbox(t, testWorktreeLifecycle)
}

func testWorktreeLifecycle(t *testing.T, mkGit func(hide ...string) worktreeGit) {
	repo := testRepo(t)
	ctx := context.Background()
	prof := &profile.Agent{Name: "coder", Workdir: repo}
	mk := func(session string) worktree {
		t.Helper()
		data := t.TempDir()
		w, err := locateWorktree(prof, data, session)
		if err != nil {
			t.Fatal(err)
		}
		w.git = mkGit(data)
		if err := w.create(ctx); err != nil {
			t.Fatal(err)
		}
		return w
	}

	w := mk(testSession)
	if !w.exists() || w.currentBranch() != "agentbridge/0123abcd" {
		t.Fatalf("after create: exists %v branch %q", w.exists(), w.currentBranch())
	}
	if got := runGit(t, w.path, "rev-parse", "HEAD"); got != runGit(t, repo, "rev-parse", "HEAD") {
		t.Errorf("the worktree starts at %s, not at the repository's HEAD", got)
	}
	for _, d := range w.refDirs() {
		if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
			t.Errorf("ref dir %s missing: %v", d, err)
		}
	}
	if ch, err := w.changes(ctx); err != nil || ch != "" {
		t.Fatalf("fresh worktree changes = %q, %v", ch, err)
	}

	// Dirty: kept, and so is its branch.
	if err := os.WriteFile(filepath.Join(w.path, "README"), []byte("changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(w.path, "new.txt"), []byte("new\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := w.retire(ctx)
	if err != nil || out.removed || out.changes != 2 || !w.exists() {
		t.Fatalf("retire of a dirty worktree = %+v, %v (exists %v)", out, err, w.exists())
	}
	if !strings.Contains(out.describe(w), "Worktree kept") || !strings.Contains(out.describe(w), "2 uncommitted change(s) on branch `agentbridge/0123abcd`") {
		t.Errorf("describe = %q", out.describe(w))
	}

	// Committed on its branch: the worktree goes, the branch stays.
	runGit(t, w.path, "add", ".")
	runGit(t, w.path, "commit", "-qm", "agent work")
	out, err = w.retire(ctx)
	if err != nil || !out.removed || !out.branchKept || w.exists() {
		t.Fatalf("retire after a commit = %+v, %v", out, err)
	}
	if _, err := os.Stat(w.adminDir()); !os.IsNotExist(err) {
		t.Errorf("admin dir left behind: %v", err)
	}
	if got := runGit(t, repo, "branch", "--list", "agentbridge/*"); !strings.Contains(got, "agentbridge/0123abcd") {
		t.Errorf("the branch with the agent's commit is gone: %q", got)
	}
	if got := runGit(t, repo, "worktree", "list"); strings.Contains(got, w.path) {
		t.Errorf("git still lists the removed worktree: %q", got)
	}

	// A new session whose short id is taken falls back to its full id;
	// untouched, its worktree and branch both go.
	w2 := mk("0123abcd-9999-4999-8999-999999999999")
	if w2.branch != "agentbridge/0123abcd-9999-4999-8999-999999999999" {
		t.Errorf("branch of a session whose short id is taken = %q", w2.branch)
	}
	out, err = w2.retire(ctx)
	if err != nil || !out.removed || out.branchKept || out.branchError != "" {
		t.Fatalf("retire of a clean worktree = %+v, %v", out, err)
	}
	if got := runGit(t, repo, "branch", "--list", w2.branch); got != "" {
		t.Errorf("branch %s left behind", got)
	}
	if !strings.Contains(out.describe(w2), "with its branch") {
		t.Errorf("describe = %q", out.describe(w2))
	}
	if got := runGit(t, repo, "status", "--porcelain"); got != "" {
		t.Errorf("the main checkout changed: %q", got)
	}
}

// TestWorktreeStatusIgnoresPlantedConfig: an agent that rewrites its
// worktree's links to a git directory it made (with core.fsmonitor, or a
// per-worktree config) cannot make the bridge's git run a command.
func TestWorktreeStatusIgnoresPlantedConfig(t *testing.T) {
	forEachSandbox(t, testWorktreeStatusIgnoresPlantedConfig)
}

func testWorktreeStatusIgnoresPlantedConfig(t *testing.T, mkGit func(hide ...string) worktreeGit) {
	repo := testRepo(t)
	ctx := context.Background()
	data := t.TempDir()
	w, err := locateWorktree(&profile.Agent{Name: "coder", Workdir: repo}, data, testSession)
	if err != nil {
		t.Fatal(err)
	}
	w.git = mkGit(data)
	if err := w.create(ctx); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(t.TempDir(), "pwned")
	evil := filepath.Join(w.path, "evil")
	runGit(t, w.path, "init", "-q", "--bare", evil)
	hook := "#!/bin/sh\ntouch " + marker + "\n"
	cfg := "[core]\n\tfsmonitor = " + filepath.Join(evil, "mon.sh") + "\n\thooksPath = " + evil + "\n[extensions]\n\tworktreeConfig = true\n" +
		"[filter \"pwn\"]\n\tclean = " + filepath.Join(evil, "mon.sh") + "\n"
	for name, content := range map[string]string{"mon.sh": hook, "config": cfg} {
		if err := os.WriteFile(filepath.Join(evil, name), []byte(content), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// A clean filter runs on modified files that .gitattributes names.
	for name, content := range map[string]string{".gitattributes": "* filter=pwn\n", "README": "modified\n"} {
		if err := os.WriteFile(filepath.Join(w.path, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	plant := map[string]string{
		filepath.Join(w.adminDir(), "commondir"):       evil + "\n",
		filepath.Join(w.adminDir(), "config.worktree"): cfg,
	}
	for p, content := range plant {
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.changes(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the bridge's git ran a command the agent configured")
	}
	if b, _ := os.ReadFile(filepath.Join(w.adminDir(), "commondir")); string(b) != "../..\n" {
		t.Errorf("commondir = %q, want restored", b)
	}

	// A .git file pointing elsewhere is restored too.
	if err := os.WriteFile(filepath.Join(w.path, ".git"), []byte("gitdir: "+evil+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := w.changes(ctx); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(w.path, ".git")); string(b) != "gitdir: "+w.adminDir()+"\n" {
		t.Errorf(".git = %q, want restored", b)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the bridge's git ran a command the agent configured")
	}
}

func TestWorktreeApply(t *testing.T) {
	w := worktree{repo: "/r", gitDir: "/r/.git", path: "/d/worktrees/coder/s", rel: "sub", name: "s"}
	cwd, binds := w.apply([]sandbox.Bind{{Path: "/srv/ref"}})
	if cwd != "/d/worktrees/coder/s/sub" {
		t.Errorf("cwd = %s", cwd)
	}
	want := []sandbox.Bind{
		{Path: "/srv/ref"},
		{Path: "/d/worktrees/coder/s", Writable: true},
		{Path: "/r/.git"},
		{Path: "/r/.git/objects", Writable: true},
		{Path: "/r/.git/worktrees/s", Writable: true},
		{Path: "/r/.git/refs/heads/agentbridge", Writable: true},
		{Path: "/r/.git/logs/refs/heads/agentbridge", Writable: true},
	}
	if !slices.Equal(binds, want) {
		t.Errorf("binds = %+v\nwant %+v", binds, want)
	}
}

// movedTools is an agent tool server that records where MoveTo moved it.
type movedTools struct {
	agent.MCPServer
	workdir, root string
}

func (m *movedTools) MoveTo(workdir, root string) { m.workdir, m.root = workdir, root }

func TestWorktreeSpawnHook(t *testing.T) {
	repo := testRepo(t)
	data := t.TempDir()
	plainDir := t.TempDir()
	cfg := &config.Config{DataDir: data, Agents: map[string]*profile.Agent{
		"coder": {Name: "coder", Workdir: repo, Worktree: true},
		"plain": {Name: "plain", Workdir: plainDir, Worktree: true},
		"off":   {Name: "off", Workdir: repo},
	}}
	hook := New(cfg, nil, slog.New(slog.DiscardHandler))
	ctx := context.Background()
	acquire := func(profile, session string, resume bool) agent.Options {
		t.Helper()
		o, err := hook.PrepareSpawn(ctx, cfg.Agents[profile], agent.Options{Workdir: cfg.Agents[profile].Workdir, SessionID: session, Resume: resume}, false)
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	wtPath := worktreePath(data, "coder", testSession)

	// A session resumed without a worktree began before worktree was on.
	if o := acquire("coder", testSession, true); o.Workdir != repo || len(o.Binds) != 0 {
		t.Errorf("resume without a worktree: %+v", o)
	}
	if o := acquire("coder", testSession, false); o.Workdir != wtPath || len(o.Binds) != 6 {
		t.Errorf("new session: workdir %s binds %v, want the worktree", o.Workdir, o.Binds)
	}

	// The bridge's send_file tool follows the agent into its worktree
	// (agents.WorkdirMover; what it then refuses: core's TestAgentToolsMoveTo).
	tools := &movedTools{}
	if _, err := hook.PrepareSpawn(ctx, cfg.Agents["coder"], agent.Options{Workdir: repo, SessionID: testSession,
		MCPServers: map[string]agent.MCPServer{"bridge": tools}}, false); err != nil {
		t.Fatal(err)
	}
	if tools.workdir != wtPath || tools.root != wtPath {
		t.Errorf("tools moved to %q (root %q), want the worktree %s", tools.workdir, tools.root, wtPath)
	}
	if o := acquire("coder", testSession, true); o.Workdir != wtPath {
		t.Errorf("resume with its worktree: workdir %s", o.Workdir)
	}
	if o := acquire("plain", testSession, false); o.Workdir != plainDir || len(o.Binds) != 0 {
		t.Errorf("not a repository: %+v", o)
	}
	// A warm spare never starts outside a worktree: a conversation taking
	// it would not work in its own.
	if o, err := hook.PrepareSpawn(ctx, cfg.Agents["plain"], agent.Options{Workdir: plainDir, SessionID: "spare"}, true); err == nil {
		t.Errorf("a spare of a profile whose workdir is not a repository started in %s", o.Workdir)
	}
	if o, err := hook.PrepareSpawn(ctx, cfg.Agents["coder"], agent.Options{Workdir: repo, SessionID: "spare-2"}, true); err != nil ||
		o.Workdir != worktreePath(data, "coder", "spare-2") {
		t.Errorf("a spare of a worktree profile: %s, %v; want its worktree", o.Workdir, err)
	}
	if o := acquire("off", testSession, false); o.Workdir != repo {
		t.Errorf("worktree off: %+v", o)
	}
}

func TestPruneWorktrees(t *testing.T) {
	repo := testRepo(t)
	ctx := context.Background()
	data := t.TempDir()
	st, err := store.Open(ctx, filepath.Join(data, "bridge.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	cfg := &config.Config{DataDir: data, Agents: map[string]*profile.Agent{"coder": {Name: "coder", Workdir: repo, Worktree: true}}}
	mk := func(session string, dirty bool) worktree {
		t.Helper()
		w, err := locateWorktree(cfg.Agents["coder"], data, session)
		if err != nil {
			t.Fatal(err)
		}
		w.git = worktreeGit{sb: sandbox.None{}}
		if err := w.create(ctx); err != nil {
			t.Fatal(err)
		}
		if dirty {
			if err := os.WriteFile(filepath.Join(w.path, "wip.txt"), []byte("wip"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return w
	}
	used := mk("aaaaaaaa-0000-4000-8000-000000000001", false)
	unusedClean := mk("bbbbbbbb-0000-4000-8000-000000000002", false)
	unusedDirty := mk("cccccccc-0000-4000-8000-000000000003", true)
	conv, _, err := st.GetOrCreateConversation(ctx, store.ConversationKey{Bot: "b", Channel: "c"}, "coder", "u")
	if err != nil {
		t.Fatal(err)
	}
	if err := st.SetSessionID(ctx, conv.ID, "aaaaaaaa-0000-4000-8000-000000000001"); err != nil {
		t.Fatal(err)
	}
	logger := slog.New(slog.DiscardHandler)
	if n, err := Prune(ctx, st, cfg, nil, time.Now().Add(-time.Hour), logger); err != nil || n != 0 {
		t.Fatalf("prune with a cutoff before everything: %d, %v", n, err)
	}
	// A dropped warm spare's worktree (no session state, an hour old) goes
	// without waiting for retention; a former session's (its state kept)
	// and a starting spare's (minutes old) stay.
	dropped := mk("dddddddd-0000-4000-8000-000000000004", false)
	former := mk("eeeeeeee-0000-4000-8000-000000000005", false)
	starting := mk("ffffffff-0000-4000-8000-000000000006", false)
	if err := os.MkdirAll(filepath.Join(data, sessiondir.Dir, "eeeeeeee-0000-4000-8000-000000000005"), 0o700); err != nil {
		t.Fatal(err)
	}
	hourAgo := time.Now().Add(-time.Hour)
	for _, w := range []worktree{dropped, former} {
		if err := os.Chtimes(w.path, hourAgo, hourAgo); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := Prune(ctx, st, cfg, nil, time.Now().Add(-2*time.Hour), logger); err != nil || n != 1 ||
		dropped.exists() || !former.exists() || !starting.exists() {
		t.Fatalf("prune of a dropped spare's worktree: removed %d, %v; dropped %v former %v starting %v, want only the dropped one gone",
			n, err, dropped.exists(), former.exists(), starting.exists())
	}
	// Fail closed: a profile whose sandbox is missing keeps its worktrees.
	cfg.Agents["coder"].Sandbox = profile.SandboxBwrap
	if n, err := Prune(ctx, st, cfg, nil, time.Now().Add(time.Minute), logger); err != nil || n != 0 || !unusedClean.exists() {
		t.Fatalf("prune without the profile's sandbox removed %d, %v", n, err)
	}
	cfg.Agents["coder"].Sandbox = profile.SandboxNone
	n, err := Prune(ctx, st, cfg, nil, time.Now().Add(time.Minute), logger)
	if err != nil || n != 3 { // unused clean, former and starting (both clean, now past the cutoff)
		t.Fatalf("prune removed %d, %v; want 3", n, err)
	}
	if !used.exists() || unusedClean.exists() || !unusedDirty.exists() {
		t.Errorf("after prune: used %v, unused clean %v, unused dirty %v; want true false true", used.exists(), unusedClean.exists(), unusedDirty.exists())
	}
}

// TestWorktreesWithoutSandboxWarn: a profile with worktree: true and
// sandbox: none is told at start that the bridge's git on its worktrees
// runs unconfined; a sandboxed one is not.
func TestWorktreesWithoutSandboxWarn(t *testing.T) {
	var logs strings.Builder
	cfg := &config.Config{Agents: map[string]*profile.Agent{
		"loose": {Name: "loose", Worktree: true, Sandbox: profile.SandboxNone},
		"boxed": {Name: "boxed", Worktree: true, Sandbox: profile.SandboxBwrap},
	}}
	New(cfg, nil, slog.New(slog.NewTextHandler(&logs, nil)))
	if got := logs.String(); strings.Count(got, "level=WARN") != 1 || !strings.Contains(got, "profile=loose") ||
		!strings.Contains(got, "git on its worktrees runs unconfined") {
		t.Errorf("logs = %q, want one warning for the profile without a sandbox", got)
	}
}

// TestWorktreeFailsClosed: when the sandbox cannot run git, no worktree is
// made (nothing left behind), and a worktree is kept, never checked or
// removed by an unconfined git.
func TestWorktreeFailsClosed(t *testing.T) {
	repo := testRepo(t)
	ctx := context.Background()
	data := t.TempDir()
	broken := worktreeGit{sb: &sandbox.Bwrap{Path: "/nonexistent/bwrap"}, hide: []string{data}}
	w, err := locateWorktree(&profile.Agent{Name: "coder", Workdir: repo}, data, testSession)
	if err != nil {
		t.Fatal(err)
	}
	w.git = broken
	if err := w.create(ctx); err == nil || w.exists() {
		t.Fatalf("create with a broken sandbox: %v (exists %v), want an error and no worktree", err, w.exists())
	}
	w.git = worktreeGit{sb: sandbox.None{}}
	if err := w.create(ctx); err != nil {
		t.Fatal(err)
	}
	w.git = broken
	out, err := w.retire(ctx)
	if err == nil || out.removed || !w.exists() {
		t.Fatalf("retire with a broken sandbox = %+v, %v (exists %v); want an error and the worktree kept", out, err, w.exists())
	}
	if _, err := (worktree{}).git.run(ctx, gitView{dir: repo}, "status"); err == nil {
		t.Error("the zero worktreeGit ran git")
	}
}
