package bridges

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/agentbridge/agentbridge/agent/sandbox"
	"github.com/agentbridge/agentbridge/config"
)

// This file gives each agent session of a profile with worktree: true its
// own git worktree (agents.*.worktree, SECURITY.md "Worktrees"):
//
//   - where: data_dir/worktrees/<profile>/<session id>, on the branch
//     agentbridge/<first 8 characters of the session id>, made from the
//     repository's HEAD when the session's first process starts; the
//     agent's cwd is the profile's workdir's place inside it;
//   - what the sandboxed agent sees of the main repository: its .git
//     read-only, except what a commit on its branch writes — the object
//     store, its worktree's admin directory (.git/worktrees/<session id>)
//     and the agentbridge/ branches and their logs;
//   - the session keeps it across restarts and takes it along to the
//     thread that resumes it; !new and retention remove it when it is
//     clean (nothing uncommitted) and keep it, saying so, when it is not.
//
// The bridge itself runs git in the main repository only, with hooks and
// fsmonitor off, and before it looks at a worktree the agent could have
// written to it restores the links between worktree and repository, so
// that nothing the agent planted runs outside the sandbox.

// WorktreesDir is the directory under data_dir that holds the agents'
// worktrees: data_dir/worktrees/<profile>/<session id>.
const WorktreesDir = "worktrees"

// WorktreeBranchPrefix starts the branch of every agent worktree.
const WorktreeBranchPrefix = "agentbridge/"

// gitSafety are the options of every git command the bridge runs: no
// hooks, no fsmonitor (both would run commands configured in the repository).
var gitSafety = []string{"-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false"}

// errNotRepo means a profile's workdir is not in a git repository.
var errNotRepo = errors.New("not a git repository")

// worktree is where one session's worktree lives and how it hangs
// together with its repository. All paths are absolute and clean.
type worktree struct {
	repo   string // the main repository's top level
	gitDir string // its common git directory (usually repo/.git)
	path   string // the worktree's top level
	rel    string // the profile's workdir relative to repo: the agent's cwd inside path
	name   string // admin directory name: gitDir/worktrees/<name> (the session id)
	branch string // agentbridge/<short id>
}

// adminDir is the worktree's administrative directory in the repository.
func (w worktree) adminDir() string { return filepath.Join(w.gitDir, "worktrees", w.name) }

// cwd is the agent's working directory inside the worktree.
func (w worktree) cwd() string { return filepath.Join(w.path, w.rel) }

// shortID is the part of a session id that names its branch.
func shortID(sessionID string) string {
	if len(sessionID) > 8 {
		return sessionID[:8]
	}
	return sessionID
}

// worktreePath is where session sessionID of profile keeps its worktree.
func worktreePath(dataDir, profile, sessionID string) string {
	return filepath.Join(dataDir, WorktreesDir, profile, sessionID)
}

// locateWorktree returns the worktree of session sessionID of profile p
// (whether or not it exists yet), or errNotRepo when p's workdir is not in
// a git repository.
func locateWorktree(ctx context.Context, p *config.Agent, dataDir, sessionID string) (worktree, error) {
	if dataDir == "" || sessionID == "" || strings.ContainsAny(sessionID, `/\`) || sessionID == "." || sessionID == ".." {
		return worktree{}, fmt.Errorf("worktree of session %q: a data_dir and a plain session id are required", sessionID)
	}
	repo, gitDir, err := findRepo(ctx, p.Workdir)
	if err != nil {
		return worktree{}, err
	}
	rel, err := filepath.Rel(repo, p.Workdir)
	if err != nil || strings.HasPrefix(rel, "..") {
		return worktree{}, fmt.Errorf("worktree: workdir %s is not inside repository %s", p.Workdir, repo)
	}
	if rel == "." {
		rel = ""
	}
	return worktree{
		repo: repo, gitDir: gitDir, rel: rel, name: sessionID,
		path:   worktreePath(dataDir, p.Name, sessionID),
		branch: WorktreeBranchPrefix + shortID(sessionID),
	}, nil
}

// findRepo returns the top level and common git directory of the
// repository that contains dir, or errNotRepo.
func findRepo(ctx context.Context, dir string) (top, gitDir string, err error) {
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return "", "", errNotRepo // the workdir is created at the first spawn: no repository yet
	}
	out, err := git(ctx, dir, nil, "rev-parse", "--show-toplevel", "--git-common-dir")
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return "", "", errNotRepo
		}
		return "", "", err
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 {
		return "", "", fmt.Errorf("git rev-parse in %s: unexpected output %q", dir, out)
	}
	top, gitDir = filepath.Clean(lines[0]), lines[1]
	if !filepath.IsAbs(gitDir) {
		gitDir = filepath.Join(dir, gitDir)
	}
	if gitDir, err = filepath.EvalSymlinks(gitDir); err != nil {
		return "", "", fmt.Errorf("git directory of %s: %w", dir, err)
	}
	return top, gitDir, nil
}

// git runs git with args (after gitSafety) in dir with a minimal
// environment (PATH and HOME of the bridge, never its tokens) plus env,
// and returns its standard output. A failure carries git's own message.
func git(ctx context.Context, dir string, env []string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", append(append([]string{}, gitSafety...), args...)...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "GIT_TERMINAL_PROMPT=0", "LC_ALL=C"}
	cmd.Env = append(cmd.Env, env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			return "", fmt.Errorf("git %s: %w", strings.Join(args, " "), err)
		}
		return "", fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, oneLine(msg, 300))
	}
	return stdout.String(), nil
}

// exists reports whether the worktree's directory is there.
func (w worktree) exists() bool {
	fi, err := os.Lstat(w.path)
	return err == nil && fi.IsDir()
}

// create makes the worktree on a new branch from the repository's HEAD.
// A stale admin entry of the same name (its directory was deleted) is
// pruned first; a branch of the same name that already exists (an earlier
// session with the same short id) makes it fall back to the full id.
func (w *worktree) create(ctx context.Context) error {
	if err := os.MkdirAll(filepath.Dir(w.path), 0o700); err != nil {
		return fmt.Errorf("create worktree: %w", err)
	}
	if _, err := git(ctx, w.repo, nil, "worktree", "prune"); err != nil {
		return fmt.Errorf("create worktree: %w", err)
	}
	if _, err := os.Lstat(w.adminDir()); err == nil {
		return fmt.Errorf("create worktree: %s already exists", w.adminDir())
	}
	if _, err := git(ctx, w.repo, nil, "rev-parse", "--verify", "--quiet", "refs/heads/"+w.branch); err == nil {
		w.branch = WorktreeBranchPrefix + w.name
	}
	if _, err := git(ctx, w.repo, nil, "worktree", "add", "--quiet", "-b", w.branch, w.path, "HEAD"); err != nil {
		return fmt.Errorf("create worktree for branch %s (the repository needs at least one commit): %w", w.branch, err)
	}
	// The agent's commits write the branch and its log there.
	for _, d := range w.refDirs() {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("create worktree: %w", err)
		}
	}
	return nil
}

// refDirs are the directories of the agentbridge/ branches and their logs.
func (w worktree) refDirs() []string {
	return []string{
		filepath.Join(w.gitDir, "refs", "heads", strings.TrimSuffix(WorktreeBranchPrefix, "/")),
		filepath.Join(w.gitDir, "logs", "refs", "heads", strings.TrimSuffix(WorktreeBranchPrefix, "/")),
	}
}

// apply points spawn options at the worktree: the agent's cwd inside it,
// and the parts of the main repository's .git its commits need, visible in
// the sandbox (read-only unless listed writable).
func (w worktree) apply(binds []sandbox.Bind) (cwd string, out []sandbox.Bind) {
	out = append(binds,
		sandbox.Bind{Path: w.path, Writable: true},
		sandbox.Bind{Path: w.gitDir},
		sandbox.Bind{Path: filepath.Join(w.gitDir, "objects"), Writable: true},
		sandbox.Bind{Path: w.adminDir(), Writable: true},
	)
	for _, d := range w.refDirs() {
		out = append(out, sandbox.Bind{Path: d, Writable: true})
	}
	return w.cwd(), out
}

// restoreLinks rewrites the files that tie the worktree to its repository
// (the worktree's .git file, the admin directory's gitdir and commondir)
// and removes a per-worktree config, all of which the agent could have
// changed to make a later git command of the bridge read a configuration
// it planted. Only call it while no agent process of the session runs.
func (w worktree) restoreLinks() error {
	for _, f := range []struct{ path, content string }{
		{filepath.Join(w.path, ".git"), "gitdir: " + w.adminDir() + "\n"},
		{filepath.Join(w.adminDir(), "gitdir"), filepath.Join(w.path, ".git") + "\n"},
		{filepath.Join(w.adminDir(), "commondir"), "../..\n"},
	} {
		if err := os.RemoveAll(f.path); err != nil {
			return fmt.Errorf("restore worktree link %s: %w", f.path, err)
		}
		if err := os.WriteFile(f.path, []byte(f.content), 0o644); err != nil {
			return fmt.Errorf("restore worktree link %s: %w", f.path, err)
		}
	}
	if err := os.RemoveAll(filepath.Join(w.adminDir(), "config.worktree")); err != nil {
		return fmt.Errorf("restore worktree links: %w", err)
	}
	return nil
}

// gitEnv addresses the worktree explicitly, so that git reads nothing the
// agent could redirect (the worktree's .git file, the commondir file).
func (w worktree) gitEnv() []string {
	return []string{"GIT_DIR=" + w.adminDir(), "GIT_WORK_TREE=" + w.path, "GIT_COMMON_DIR=" + w.gitDir}
}

// changes returns the worktree's uncommitted changes (git status
// --porcelain: modified, staged and untracked files, not ignored ones),
// one per line; "" means clean. Only call it while no agent process of the
// session runs.
func (w worktree) changes(ctx context.Context) (string, error) {
	if err := w.restoreLinks(); err != nil {
		return "", err
	}
	out, err := git(ctx, w.path, w.gitEnv(), "status", "--porcelain", "--untracked-files=all")
	if err != nil {
		return "", fmt.Errorf("status of worktree %s: %w", w.path, err)
	}
	return strings.TrimRight(out, "\n"), nil
}

// currentBranch is the branch the worktree has checked out, read from its
// HEAD file; "" when detached or unreadable.
func (w worktree) currentBranch() string {
	b, err := os.ReadFile(filepath.Join(w.adminDir(), "HEAD"))
	if err != nil {
		return ""
	}
	ref, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "ref: refs/heads/")
	if !ok {
		return ""
	}
	return ref
}

// worktreeOutcome is what retireWorktree did.
type worktreeOutcome struct {
	removed     bool
	changes     int    // uncommitted changes of a kept worktree
	branch      string // the session's branch
	branchKept  bool   // the branch has commits the repository's HEAD does not
	branchError string // why the branch could not be deleted, when not for that
}

// retire removes the worktree when it has no uncommitted changes, and then
// its branch when HEAD has all of the branch's commits (git branch -d);
// with changes it keeps both. Only call it while no agent process of the
// session runs.
func (w worktree) retire(ctx context.Context) (worktreeOutcome, error) {
	out := worktreeOutcome{branch: w.currentBranch()}
	if out.branch == "" || !strings.HasPrefix(out.branch, WorktreeBranchPrefix) {
		out.branch = w.branch
	}
	changes, err := w.changes(ctx)
	if err != nil {
		return out, err
	}
	if changes != "" {
		out.changes = strings.Count(changes, "\n") + 1
		return out, nil
	}
	if err := removeAllForce(w.path); err != nil {
		return out, fmt.Errorf("remove worktree %s: %w", w.path, err)
	}
	if err := os.RemoveAll(w.adminDir()); err != nil {
		return out, fmt.Errorf("remove worktree admin dir %s: %w", w.adminDir(), err)
	}
	out.removed = true
	if _, err := git(ctx, w.repo, nil, "branch", "-d", out.branch); err != nil {
		if strings.Contains(err.Error(), "not fully merged") {
			out.branchKept = true
		} else {
			out.branchError = err.Error()
		}
	}
	return out, nil
}

// removeAllForce removes dir like os.RemoveAll, first making directories
// the agent made read-only writable again.
func removeAllForce(dir string) error {
	if err := os.RemoveAll(dir); err == nil {
		return nil
	}
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			_ = os.Chmod(p, 0o700)
		}
		return nil
	})
	return os.RemoveAll(dir)
}

// describe is the chat line for a retired worktree.
func (o worktreeOutcome) describe(w worktree) string {
	switch {
	case !o.removed:
		return fmt.Sprintf("📌 Worktree kept: %s has %d uncommitted change(s) on branch %s.", codeSpan(w.path), o.changes, codeSpan(o.branch))
	case o.branchKept:
		return fmt.Sprintf("🧹 Worktree removed (it was clean); branch %s is kept: it has commits that %s does not.", codeSpan(o.branch), codeSpan("HEAD"))
	case o.branchError != "":
		return fmt.Sprintf("🧹 Worktree removed (it was clean); branch %s could not be deleted: %s", codeSpan(o.branch), oneLine(o.branchError, 200))
	default:
		return fmt.Sprintf("🧹 Worktree removed (it was clean), with its branch %s.", codeSpan(o.branch))
	}
}
