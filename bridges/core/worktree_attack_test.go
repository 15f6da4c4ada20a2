package core_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/agent/sandbox"
	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/features/worktree"
	"github.com/agentbridge/agentbridge/bridges/kits/bridgetest"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/config/profile"
	"github.com/agentbridge/agentbridge/internal/testkit"
)

// This file attacks the bridge's git on agent worktrees (SECURITY.md
// "Worktrees"): the agent plants, in its worktree, in a sub-repository
// staged as a gitlink and in a real submodule, every way git has of running
// a program — clean and smudge filters, textconv, diff and merge drivers,
// hooks, fsmonitor, core.sshCommand, include and includeIf, .gitmodules
// commands, a redirected .git and commondir, a per-worktree config — each
// writing a canary file beside data_dir, outside any sandbox. Then every
// operation the bridge performs on worktrees runs, and no canary appears.

// gitTrapTimeout bounds the test's own git commands.
const gitTrapTimeout = time.Minute

// defused are options for the test's own git in a trapped worktree (as the
// agent it would not care): nothing planted runs.
var defused = []string{"-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false", "-c", "filter.pwn.clean=cat",
	"-c", "filter.pwn.smudge=cat", "-c", "filter.inc.clean=cat", "-c", "filter.incif.clean=cat",
	"-c", "protocol.file.allow=always", "-c", "user.name=agent", "-c", "user.email=agent@example.com", "-c", "init.defaultBranch=main"}

// gitT runs the test's own git (defused) in dir and returns its output.
func gitT(t *testing.T, dir string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), gitTrapTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", append(slices.Clone(defused), args...)...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "GIT_CONFIG_NOSYSTEM=1"}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v in %s: %v\n%s", args, dir, err, out)
	}
	return strings.TrimSpace(string(out))
}

func writeFiles(t *testing.T, files map[string]string) {
	t.Helper()
	for p, content := range files {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		mode := os.FileMode(0o644)
		if strings.HasPrefix(content, "#!") {
			mode = 0o755
		}
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
	}
}

// trapLab is the test's machine: a bridge config file and data_dir, the
// profile's repository, a source repository for submodules, and the canary
// directory that planted commands write to.
type trapLab struct {
	root, data, cfgFile, repo, src, canary string
}

func newTrapLab(t *testing.T) trapLab {
	t.Helper()
	root := t.TempDir()
	l := trapLab{root: root, data: filepath.Join(root, "data"), cfgFile: filepath.Join(root, "bridge.yaml"),
		repo: filepath.Join(root, "repo"), src: filepath.Join(root, "src"), canary: filepath.Join(root, "canary")}
	for _, d := range []string{l.data, l.canary} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	writeFiles(t, map[string]string{
		l.cfgFile:                              "bots:\n  - slack: { bot_token: xoxb-secret-token }\n",
		filepath.Join(l.repo, "README"):        "readme\n",
		filepath.Join(l.src, "m.txt"):          "module file\n",
		filepath.Join(l.src, ".gitattributes"): "* filter=pwn diff=pwn merge=pwn\n",
	})
	for _, d := range []string{l.repo, l.src} {
		gitT(t, d, "init", "-q")
		gitT(t, d, "add", ".")
		gitT(t, d, "commit", "-qm", "init")
	}
	return l
}

// fired lists the canaries: the planted commands that ran outside a
// sandbox (inside one they cannot see the canary directory).
func (l trapLab) fired(t *testing.T) []string {
	t.Helper()
	ents, err := os.ReadDir(l.canary)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

// assertNoneFired fails the test when a planted command ran outside a sandbox.
func (l trapLab) assertNoneFired(t *testing.T, after string) {
	t.Helper()
	if got := l.fired(t); len(got) > 0 {
		t.Fatalf("after %s, planted commands ran outside the sandbox: %v", after, got)
	}
}

// trap is a shell command that leaves canary name (and a copy of the
// bridge's config) in the canary directory, then copies its input to its
// output like a filter.
func (l trapLab) trap(name string) string {
	c := filepath.Join(l.canary, name)
	return fmt.Sprintf("touch %s; cp %s %s.stolen 2>/dev/null; cat", c, l.cfgFile, c)
}

// trapConfig is a git config running a trap through every program setting:
// the filter, diff and merge drivers "pwn", fsmonitor, sshCommand, hooks in
// hooksDir, and the filters "inc" and "incif" defined in an included file.
func (l trapLab) trapConfig(label, hooksDir, incFile, incIfFile string) string {
	tr := func(what string) string { return quoteConfig(l.trap(label + "-" + what)) }
	return "[core]\n\tfsmonitor = " + tr("fsmonitor") + "\n\tsshCommand = " + tr("sshCommand") +
		"\n\thooksPath = " + hooksDir + "\n\tpager = " + tr("pager") + "\n\taskPass = " + tr("askPass") +
		"\n[filter \"pwn\"]\n\tclean = " + tr("filter-clean") + "\n\tsmudge = " + tr("filter-smudge") +
		"\n[diff \"pwn\"]\n\ttextconv = " + tr("textconv") + "\n\tcommand = " + tr("diff-command") +
		"\n[diff]\n\texternal = " + tr("diff-external") +
		"\n[merge \"pwn\"]\n\tdriver = " + tr("merge-driver") +
		"\n[credential]\n\thelper = !" + tr("credential") +
		"\n[status]\n\tsubmoduleSummary = true\n[submodule]\n\trecurse = true" +
		"\n[include]\n\tpath = " + incFile +
		"\n[includeIf \"gitdir:/\"]\n\tpath = " + incIfFile + "\n"
}

// quoteConfig quotes a git config value (";" starts a comment otherwise).
func quoteConfig(v string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(v) + `"`
}

// hookNames are the hooks git may run for the commands the bridge uses.
var hookNames = []string{"pre-commit", "post-checkout", "post-commit", "post-index-change", "reference-transaction",
	"post-merge", "pre-auto-gc", "post-rewrite", "fsmonitor-watchman", "push-to-checkout", "pre-push"}

// plantRepoTraps plants traps in git directory gitDir (labelled label):
// its config (with include and includeIf files) and every hook, both in
// gitDir/hooks and in the hooks directory the config names. Everything
// lives in gitDir, so that the work tree stays as it was.
func (l trapLab) plantRepoTraps(t *testing.T, label, gitDir string) {
	t.Helper()
	hooks := filepath.Join(gitDir, "trap-hooks")
	inc, incIf := filepath.Join(gitDir, "inc.cfg"), filepath.Join(gitDir, "incif.cfg")
	files := map[string]string{
		inc:   "[filter \"inc\"]\n\tclean = " + quoteConfig(l.trap(label+"-include")) + "\n",
		incIf: "[filter \"incif\"]\n\tclean = " + quoteConfig(l.trap(label+"-includeIf")) + "\n",
	}
	for _, h := range hookNames {
		script := "#!/bin/sh\n" + strings.TrimSuffix(l.trap(label+"-hook-"+h), "; cat") + "\n"
		files[filepath.Join(hooks, h)] = script
		files[filepath.Join(gitDir, "hooks", h)] = script
	}
	writeFiles(t, files)
	cfg, err := os.OpenFile(filepath.Join(gitDir, "config"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer cfg.Close()
	if _, err := cfg.WriteString(l.trapConfig(label, hooks, inc, incIf)); err != nil {
		t.Fatal(err)
	}
}

// plantWorktree does, in worktree w (admin directory admin of repository
// l.repo), what an agent can from its sandbox: a sub-repository "sub"
// staged as a gitlink and a submodule "mod" (its git directory in the
// admin directory, where the agent may write), both with trapped configs
// and files whose attributes name the trapped drivers; trapped attributes
// and .gitmodules in the worktree; a redirected .git and commondir and a
// per-worktree config (all trapped). With dirty, the sub-repositories and
// the worktree have uncommitted changes; else everything is committed, and
// only the files' times changed, so that git status must run the filters
// to find the worktree clean.
func (l trapLab) plantWorktree(t *testing.T, w, admin string, dirty bool) {
	t.Helper()
	sub := filepath.Join(w, "sub")
	attrs := "a.txt filter=pwn diff=pwn merge=pwn\nb.txt filter=inc\nc.txt filter=incif\n"
	writeFiles(t, map[string]string{
		filepath.Join(sub, "a.txt"): "a\n", filepath.Join(sub, "b.txt"): "b\n", filepath.Join(sub, "c.txt"): "c\n",
		filepath.Join(sub, ".gitattributes"): attrs,
	})
	gitT(t, sub, "init", "-q")
	gitT(t, sub, "add", ".")
	gitT(t, sub, "commit", "-qm", "sub")
	gitT(t, w, "add", "sub") // a gitlink: git warns of an embedded repository
	gitT(t, w, "submodule", "add", "-q", l.src, "mod")
	// The agent cannot write the repository's config: what submodule add
	// wrote there goes (the submodule stays: a gitlink, .gitmodules, its
	// git directory in the admin directory).
	gitT(t, l.repo, "config", "--remove-section", "submodule.mod")
	modGitDir := filepath.Join(admin, "modules", "mod")
	if _, err := os.Stat(filepath.Join(modGitDir, "config")); err != nil {
		t.Fatalf("the submodule's git directory is not in the worktree's admin directory: %v", err)
	}
	writeFiles(t, map[string]string{
		filepath.Join(w, ".gitattributes"): "* filter=pwn diff=pwn merge=pwn\n",
		filepath.Join(w, ".gitmodules"):    "[submodule \"mod\"]\n\tpath = mod\n\turl = " + quoteConfig("ext::sh -c "+l.trap("gitmodules-url")) + "\n",
	})
	if !dirty {
		gitT(t, w, "add", "-A")
		gitT(t, w, "commit", "-qm", "agent work")
	}
	l.plantRepoTraps(t, "sub", filepath.Join(sub, ".git"))
	l.plantRepoTraps(t, "mod", modGitDir)
	// A git directory of the agent's, and the links that could lead to it.
	evil := filepath.Join(admin, "evil")
	gitT(t, w, "init", "-q", "--bare", evil)
	l.plantRepoTraps(t, "evil", evil)
	writeFiles(t, map[string]string{
		filepath.Join(admin, "commondir"):       evil + "\n",
		filepath.Join(admin, "config.worktree"): l.trapConfig("worktree", filepath.Join(evil, "trap-hooks"), evil+"/inc.cfg", evil+"/incif.cfg"),
		filepath.Join(w, ".git"):                "gitdir: " + evil + "\n",
	})
	// Git hashes a file again, through its clean filter, when its time
	// changed but not its size: changes of the same size, or none.
	later := time.Now().Add(time.Hour)
	for _, f := range []string{"sub/a.txt", "sub/b.txt", "sub/c.txt", "mod/m.txt"} {
		p := filepath.Join(w, f)
		if dirty {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			writeFiles(t, map[string]string{p: strings.ToUpper(string(b))})
		}
		if err := os.Chtimes(p, later, later); err != nil {
			t.Fatal(err)
		}
	}
	if dirty {
		writeFiles(t, map[string]string{filepath.Join(w, "notes.txt"): "untracked\n"})
	}
}

// armed runs git status in worktree w the way the bridge did before its
// git was sandboxed (unconfined, hooks and fsmonitor off, the worktree
// addressed explicitly) and returns the canaries that fired: proof that
// the traps are live and the test can fail.
func (l trapLab) armed(t *testing.T, w, admin string) []string {
	t.Helper()
	cmd := exec.Command("git", "-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false", "status", "--porcelain", "--untracked-files=all")
	cmd.Dir = w
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "GIT_DIR=" + admin, "GIT_WORK_TREE=" + w,
		"GIT_COMMON_DIR=" + filepath.Join(l.repo, ".git")}
	_ = cmd.Run() // a failing status may still have run filters
	return l.fired(t)
}

// waitRetired waits for the !new notice of k that tells what became of
// session's worktree.
func waitRetired(h *harness, k bridges.ConversationKey, session string) bridgetest.Msg {
	h.t.Helper()
	return h.plat.WaitFor(h.t, k, waitTimeout, "the !new notice of session "+session, func(m bridgetest.Msg) bool {
		return strings.Contains(m.Text, "Started a fresh session") && strings.Contains(m.Text, session[:8])
	})
}

// TestWorktreeTrapsNeverRunOutsideSandbox plants traps in worktrees (see
// plantWorktree) and runs every operation the bridge performs on them:
// !status, !new of a dirty worktree (kept) and of a clean one (removed,
// branch -d), the next session's git worktree add in the trapped
// repository, a bridge restart resuming a trapped worktree, !resume moving
// one to another thread, and retention of a dirty and of a clean unused
// worktree. No canary may appear; at the end the test shows that the same
// traps fire under the bridge's former, unconfined git status.
func TestWorktreeTrapsNeverRunOutsideSandbox(t *testing.T) {
	testkit.NeedTool(t, "git", "apt-get install git")
	bw := &sandbox.Bwrap{}
	if err := bw.Check(context.Background()); err != nil {
		testkit.SkipOrFail(t, "bwrap unusable: %v", err)
	}
	l := newTrapLab(t)
	s := setup{
		dbPath:    filepath.Join(l.data, "bridge.db"),
		sandboxes: map[string]sandbox.Sandbox{"coder": bw},
		profile: func(a *profile.Agent) {
			a.Workdir, a.Worktree, a.Sandbox = l.repo, true, profile.SandboxBwrap
		},
		configure: func(c *config.Config) { c.Path = l.cfgFile },
	}
	h := start(t, s)
	a, b := key("A"), key("B")
	admin := func(session string) string { return filepath.Join(l.repo, ".git", "worktrees", session) }
	wtDir := func(session string) string { return filepath.Join(l.data, worktree.Dir, "coder", session) }
	exists := func(p string) bool { _, err := os.Stat(p); return err == nil }

	// Session 1: its worktree, trapped and dirty. !status, then !new: kept.
	h.send(a, "m1", "alice", "first")
	h.waitText(a, "pong: first")
	h.waitLedgerFinal(a)
	s1 := h.conversation(a).SessionID
	if !exists(filepath.Join(wtDir(s1), "README")) {
		t.Fatalf("no worktree for session %s", s1)
	}
	l.plantWorktree(t, wtDir(s1), admin(s1), true)
	h.send(a, "c1", "alice", "!status")
	h.waitText(a, "worktree: branch `agentbridge/"+s1[:8]+"`")
	h.send(a, "c2", "alice", "!new")
	if m := waitRetired(h, a, s1); !strings.Contains(m.Text, "📌 Worktree kept") {
		t.Errorf("!new of a dirty trapped worktree: %q, want it kept", m.Text)
	}
	l.assertNoneFired(t, "!new of a dirty worktree")
	if !exists(wtDir(s1)) {
		t.Fatal("the dirty worktree was removed")
	}

	// Session 2: git worktree add in the trapped repository; trapped but
	// clean (committed): !new removes it and runs git branch -d.
	h.send(a, "m2", "alice", "second")
	h.waitText(a, "pong: second")
	h.waitLedgerFinal(a)
	s2 := h.conversation(a).SessionID
	l.assertNoneFired(t, "git worktree add in a trapped repository")
	l.plantWorktree(t, wtDir(s2), admin(s2), false)
	h.send(a, "c3", "alice", "!new")
	if m := waitRetired(h, a, s2); !strings.Contains(m.Text, "🧹 Worktree removed (it was clean); branch `agentbridge/"+s2[:8]+"` is kept") {
		t.Errorf("!new of a clean trapped worktree: %q, want it removed and its branch kept", m.Text)
	}
	l.assertNoneFired(t, "!new of a clean worktree")

	// Session 3, trapped and dirty; then a restart, whose recovery and next
	// message resume it in its worktree.
	h.send(a, "m3", "alice", "third")
	h.waitText(a, "pong: third")
	h.waitLedgerFinal(a)
	s3 := h.conversation(a).SessionID
	l.plantWorktree(t, wtDir(s3), admin(s3), true)
	h.stop()
	h = start(t, s)
	h.send(a, "m4", "alice", "after restart")
	h.waitText(a, "pong: after restart")
	h.waitLedgerFinal(a)
	if acq := h.pool.Acquisitions(); len(acq) != 1 || acq[0].Opts.SessionID != s3 || !acq[0].Opts.Resume || acq[0].Opts.Workdir != wtDir(s3) {
		t.Errorf("after the restart: acquisitions %+v, want session %s resumed in its worktree", acq, s3)
	}
	l.assertNoneFired(t, "a restart")

	// !resume moves session 3 to thread B, which resumes it there.
	h.send(b, "c4", "alice", "!resume "+s3[:8])
	h.waitText(b, "↩️ Resumed session")
	h.send(b, "m5", "alice", "in B")
	h.waitText(b, "pong: in B")
	h.waitLedgerFinal(b)
	l.assertNoneFired(t, "!resume")

	// Retention: session 1 (unused, dirty) is kept; once its work is
	// committed (clean, with traps) it is removed.
	logger := slog.New(slog.DiscardHandler)
	ctx := context.Background()
	if n, err := worktree.Prune(ctx, h.st, h.cfg, s.sandboxes, time.Now().Add(2*time.Hour), logger); err != nil || n != 0 || !exists(wtDir(s1)) {
		t.Fatalf("retention of a dirty trapped worktree: removed %d, %v; want it kept", n, err)
	}
	l.assertNoneFired(t, "retention of a dirty worktree")
	w1 := wtDir(s1)
	writeFiles(t, map[string]string{filepath.Join(w1, ".git"): "gitdir: " + admin(s1) + "\n", filepath.Join(admin(s1), "commondir"): "../..\n"})
	for _, d := range []string{filepath.Join(w1, "sub"), filepath.Join(w1, "mod"), w1} {
		gitT(t, d, "add", "-A")
		gitT(t, d, "commit", "-qm", "agent commits its work")
	}
	later := time.Now().Add(time.Hour)
	for _, f := range []string{"sub/a.txt", "sub/b.txt", "sub/c.txt", "mod/m.txt"} {
		if err := os.Chtimes(filepath.Join(w1, f), later, later); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := worktree.Prune(ctx, h.st, h.cfg, s.sandboxes, time.Now().Add(2*time.Hour), logger); err != nil || n != 1 || exists(w1) {
		t.Fatalf("retention of a clean trapped worktree: removed %d, %v (exists %v); want it removed", n, err, exists(w1))
	}
	l.assertNoneFired(t, "retention of a clean worktree")
	if !exists(wtDir(s3)) {
		t.Error("retention removed the worktree of a session in use")
	}

	// The traps are live: the former unconfined git status fires them.
	w3 := wtDir(s3)
	writeFiles(t, map[string]string{filepath.Join(w3, ".git"): "gitdir: " + admin(s3) + "\n"})
	fired := l.armed(t, w3, admin(s3))
	for _, want := range []string{"sub-filter-clean", "sub-include", "sub-includeIf", "mod-filter-clean", "sub-filter-clean.stolen"} {
		if !slices.Contains(fired, want) {
			t.Errorf("unconfined git status did not fire %s (fired: %v): the traps are not live", want, fired)
		}
	}
}

// TestWorktreeKeptWhenSandboxFails: when the profile's sandbox cannot run
// git, !new keeps the worktree and says so; the bridge never falls back to
// an unconfined git.
func TestWorktreeKeptWhenSandboxFails(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not on PATH")
	}
	l := newTrapLab(t)
	s := setup{
		dbPath:    filepath.Join(l.data, "bridge.db"),
		sandboxes: map[string]sandbox.Sandbox{"coder": sandbox.None{}},
		profile:   func(a *profile.Agent) { a.Workdir, a.Worktree, a.Sandbox = l.repo, true, profile.SandboxBwrap },
		configure: func(c *config.Config) { c.Path = l.cfgFile },
	}
	h := start(t, s)
	a := key("A")
	h.send(a, "m1", "alice", "first")
	h.waitText(a, "pong: first")
	h.waitLedgerFinal(a)
	s1 := h.conversation(a).SessionID
	w := filepath.Join(l.data, worktree.Dir, "coder", s1)
	l.plantWorktree(t, w, filepath.Join(l.repo, ".git", "worktrees", s1), false)
	h.stop()

	s.sandboxes = map[string]sandbox.Sandbox{"coder": &sandbox.Bwrap{Path: "/nonexistent/bwrap"}}
	h = start(t, s)
	h.send(a, "c1", "alice", "!new")
	if m := waitRetired(h, a, s1); !strings.Contains(m.Text, "⚠️ Worktree kept") || !strings.Contains(m.Text, "bubblewrap") {
		t.Errorf("!new with a broken sandbox: %q, want the worktree kept and why", m.Text)
	}
	if _, err := os.Stat(filepath.Join(w, "sub")); err != nil {
		t.Errorf("the worktree is gone: %v", err)
	}
	l.assertNoneFired(t, "!new with a broken sandbox")
}
