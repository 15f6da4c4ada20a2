package worktree

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentbridge/agentbridge/agent/sandbox"
	"github.com/agentbridge/agentbridge/bridges/core/render"
	"github.com/agentbridge/agentbridge/config/profile"
	"github.com/agentbridge/agentbridge/internal/textcut"
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
// The bridge's own git commands on the repository and the worktrees run
// in the profile's sandbox (worktree_git.go), never as the bridge with its
// view of the machine: everything git reads there the agent could have
// written, and git runs programs named by what it reads.

// Dir is the directory under data_dir that holds the agents'
// worktrees: data_dir/worktrees/<profile>/<session id>.
const Dir = "worktrees"

// WorktreeBranchPrefix starts the branch of every agent worktree.
const WorktreeBranchPrefix = "agentbridge/"

// errNotRepo means a profile's workdir is not in a git repository.
var errNotRepo = errors.New("not a git repository")

// worktree is where one session's worktree lives and how it hangs
// together with its repository. All paths are absolute and clean.
type worktree struct {
	repo   string      // the main repository's top level
	gitDir string      // its common git directory (usually repo/.git)
	path   string      // the worktree's top level
	rel    string      // the profile's workdir relative to repo: the agent's cwd inside path
	name   string      // admin directory name: gitDir/worktrees/<name> (the session id)
	branch string      // agentbridge/<short id>
	git    worktreeGit // runs git for the profile, confined; set by the caller before create or retire
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
	return filepath.Join(dataDir, Dir, profile, sessionID)
}

// locateWorktree returns the worktree of session sessionID of profile p
// (whether or not it exists yet), or errNotRepo when p's workdir is not in
// a git repository. It runs nothing; set the result's git before create
// or retire.
func locateWorktree(p *profile.Agent, dataDir, sessionID string) (worktree, error) {
	if dataDir == "" || sessionID == "" || strings.ContainsAny(sessionID, `/\`) || sessionID == "." || sessionID == ".." {
		return worktree{}, fmt.Errorf("worktree of session %q: a data_dir and a plain session id are required", sessionID)
	}
	workdir, repo, gitDir, err := findRepo(p.Workdir)
	if err != nil {
		return worktree{}, err
	}
	rel, err := filepath.Rel(repo, workdir)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
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

// findRepo returns dir with links followed, and the top level and common
// git directory of the repository that contains it, or errNotRepo. It
// reads files and runs no git (git would read the repository's config):
// the repository is the nearest directory from dir upwards with a .git
// that is a git directory, or a file "gitdir: <path>" (a linked worktree,
// a submodule) whose git directory names the common one in its commondir.
func findRepo(dir string) (real, top, gitDir string, err error) {
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return "", "", "", errNotRepo // the workdir is created at the first spawn: no repository yet
	}
	if real, err = filepath.EvalSymlinks(dir); err != nil {
		return "", "", "", fmt.Errorf("workdir %s: %w", dir, err)
	}
	for d := real; ; d = filepath.Dir(d) {
		if g, ok := gitDirAt(d); ok {
			return real, d, g, nil
		}
		if d == filepath.Dir(d) {
			return "", "", "", errNotRepo
		}
	}
}

// gitDirAt returns the common git directory of d/.git (links followed)
// when d/.git is a git directory or a gitdir file leading to one.
func gitDirAt(d string) (string, bool) {
	dotGit := filepath.Join(d, ".git")
	fi, err := os.Stat(dotGit)
	if err != nil {
		return "", false
	}
	dir := dotGit
	if !fi.IsDir() {
		b, err := os.ReadFile(dotGit)
		link, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir: ")
		if err != nil || !ok || link == "" {
			return "", false
		}
		if dir = link; !filepath.IsAbs(dir) {
			dir = filepath.Join(d, dir)
		}
		if b, err := os.ReadFile(filepath.Join(dir, "commondir")); err == nil {
			if common := strings.TrimSpace(string(b)); filepath.IsAbs(common) {
				dir = common
			} else {
				dir = filepath.Join(dir, common)
			}
		}
	}
	dir, err = filepath.EvalSymlinks(dir)
	if err != nil {
		return "", false
	}
	for _, part := range []string{"HEAD", "objects", "refs"} {
		if _, err := os.Stat(filepath.Join(dir, part)); err != nil {
			return "", false
		}
	}
	return dir, true
}

// exists reports whether the worktree's directory is there.
func (w worktree) exists() bool {
	fi, err := os.Lstat(w.path)
	return err == nil && fi.IsDir()
}

// create makes the worktree on a new branch from the repository's HEAD.
// A stale admin entry of the same name (its directory was deleted) is
// removed first, as git worktree prune would (the bridge does not run
// prune: from its sandbox it would see no other worktree and prune them
// all); a branch of the same name that already exists (an earlier session
// with the same short id) makes it fall back to the full id. Git runs in
// the sandbox and writes only the new worktree, .git/worktrees and the
// agentbridge/ branches; when it fails, nothing of the worktree is left.
func (w *worktree) create(ctx context.Context) error {
	if err := os.MkdirAll(filepath.Dir(w.path), 0o700); err != nil {
		return fmt.Errorf("create worktree: %w", err)
	}
	if _, err := os.Lstat(w.adminDir()); err == nil {
		if _, err := os.Lstat(w.path); err == nil {
			return fmt.Errorf("create worktree: %s already exists", w.adminDir())
		}
		if err := os.RemoveAll(w.adminDir()); err != nil {
			return fmt.Errorf("create worktree: remove the stale %s: %w", w.adminDir(), err)
		}
	}
	if _, err := w.git.run(ctx, w.repoView(false), "rev-parse", "--verify", "--quiet", "refs/heads/"+w.branch); err == nil {
		w.branch = WorktreeBranchPrefix + w.name
	}
	write := append([]string{w.path, filepath.Join(w.gitDir, "worktrees")}, w.refDirs()...)
	for _, d := range write {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("create worktree: %w", err)
		}
	}
	view := gitView{dir: w.path, read: []string{w.gitDir}, write: write, env: []string{"GIT_DIR=" + w.gitDir}}
	if _, err := w.git.run(ctx, view, "worktree", "add", "--quiet", "--no-track", "-b", w.branch, w.path, "HEAD"); err != nil {
		if rerr := removeAllForce(w.path); rerr != nil {
			err = errors.Join(err, rerr)
		}
		return fmt.Errorf("create worktree for branch %s (the repository needs at least one commit): %w", w.branch, err)
	}
	return nil
}

// repoView is the view of a git command on the repository alone (no
// worktree), read-only unless writable: git branch -d writes the
// packed-refs lock in .git itself.
func (w worktree) repoView(writable bool) gitView {
	v := gitView{dir: w.gitDir, read: []string{w.gitDir}, env: []string{"GIT_DIR=" + w.gitDir}}
	if writable {
		v.read, v.write = nil, []string{w.gitDir}
	}
	return v
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
// --porcelain: modified, staged and untracked files, not ignored ones,
// sub-repositories and submodules included), one per line; "" means
// clean. Git runs in the sandbox and sees the worktree and the repository
// read-only. Only call it while no agent process of the session runs.
func (w worktree) changes(ctx context.Context) (string, error) {
	if err := w.restoreLinks(); err != nil {
		return "", err
	}
	view := gitView{dir: w.path, read: []string{w.path, w.gitDir}, env: w.gitEnv()}
	out, err := w.git.run(ctx, view, "status", "--porcelain", "--untracked-files=all")
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
// with changes it keeps both, and when git cannot tell (an error: the
// sandbox could not run it, git failed) it keeps both and returns the
// error. Only call it while no agent process of the session runs.
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
	if _, err := w.git.run(ctx, w.repoView(true), "branch", "-d", out.branch); err != nil {
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
		return fmt.Sprintf("📌 Worktree kept: %s has %d uncommitted change(s) on branch %s.", render.CodeSpan(w.path), o.changes, render.CodeSpan(o.branch))
	case o.branchKept:
		return fmt.Sprintf("🧹 Worktree removed (it was clean); branch %s is kept: it has commits that %s does not.", render.CodeSpan(o.branch), render.CodeSpan("HEAD"))
	case o.branchError != "":
		return fmt.Sprintf("🧹 Worktree removed (it was clean); branch %s could not be deleted: %s", render.CodeSpan(o.branch), textcut.OneLine(o.branchError, 200))
	default:
		return fmt.Sprintf("🧹 Worktree removed (it was clean), with its branch %s.", render.CodeSpan(o.branch))
	}
}
