//go:build linux

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/internal/testkit"
)

// gitIn runs git in dir and returns its trimmed output.
func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v in %s: %v\n%s", args, dir, err, out)
	}
	return strings.TrimSpace(string(out))
}

// TestE2EWorktreePerConversation: with worktree: true and the workdir a git
// repository, two Slack threads have their agents (real CLI, bwrap
// sandbox) edit and commit the same file; each commit lands on its own
// agentbridge/ branch, the main checkout is untouched, !status shows the
// branch, and !new removes the clean worktree and keeps the branch that
// holds the agent's commit.
func TestE2EWorktreePerConversation(t *testing.T) {
	t.Parallel()
	testkit.NeedBwrap(t)
	testkit.NeedTool(t, "git", "apt-get install git")
	// No warm spares: the test counts the repository's worktrees and
	// branches, and a spare holds one of each (see core's
	// TestWarmSparesWithWorktreeProfile).
	e := startSlackBridgeWith(t, profileOptions{extra: "    allowed_tools: [Bash]\n    worktree: true\n    warm_spares: 0\n"})
	repo := e.workdir
	if err := os.WriteFile(filepath.Join(repo, "shared.txt"), []byte("base\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitIn(t, repo, "init", "-q")
	gitIn(t, repo, "add", "shared.txt")
	gitIn(t, repo, "commit", "-qm", "base")
	base := gitIn(t, repo, "rev-parse", "HEAD")

	edit := func(word string) string {
		return "[bash echo " + word + " > shared.txt && git add shared.txt && " +
			"git -c user.name=agent -c user.email=agent@example.com commit -qm " + word + " && echo branch=$(git rev-parse --abbrev-ref HEAD)]"
	}
	threads := map[string]string{
		"one": e.slack.Mention(slackChan, alice, edit("one"), ""),
		"two": e.slack.Mention(slackChan, alice, edit("two"), ""),
	}
	for _, ts := range threads {
		// The finished answer: a live message may show the tool's output
		// cut ("branch=a") on a busy machine. Fails fast on a tool error.
		e.waitAnswer(t, ts, "tool said:")
		if !strings.Contains(e.threadText(ts), "tool said: branch=agentbridge/") {
			t.Fatalf("the agent's commit failed in thread %s\nposts: %s", ts, e.dump())
		}
	}

	branches := strings.Fields(strings.ReplaceAll(gitIn(t, repo, "branch", "--list", "agentbridge/*", "--format=%(refname:short)"), "\n", " "))
	if len(branches) != 2 {
		t.Fatalf("agentbridge branches = %v, want one per conversation\nposts: %s", branches, e.dump())
	}
	var contents []string
	for _, b := range branches {
		contents = append(contents, gitIn(t, repo, "show", b+":shared.txt"))
		if parent := gitIn(t, repo, "rev-parse", b+"^"); parent != base {
			t.Errorf("branch %s starts at %s, want the repository's HEAD %s", b, parent, base)
		}
	}
	slices.Sort(contents)
	if !slices.Equal(contents, []string{"one", "two"}) {
		t.Errorf("shared.txt on the branches = %v, want one and two", contents)
	}
	if b, _ := os.ReadFile(filepath.Join(repo, "shared.txt")); string(b) != "base\n" || gitIn(t, repo, "status", "--porcelain") != "" {
		t.Errorf("the main checkout changed: shared.txt %q, status %q", b, gitIn(t, repo, "status", "--porcelain"))
	}
	if head := gitIn(t, repo, "rev-parse", "HEAD"); head != base {
		t.Errorf("the main branch moved to %s", head)
	}

	one := threads["one"]
	e.slack.Mention(slackChan, alice, "!status", one)
	e.waitThreadText(t, one, "worktree: branch `agentbridge/")
	e.slack.Mention(slackChan, alice, "!new", one)
	e.waitThreadText(t, one, "Worktree removed (it was clean); branch `agentbridge/")
	wts := gitIn(t, repo, "worktree", "list", "--porcelain")
	if n := strings.Count(wts, "worktree "); n != 2 { // the main checkout and thread two's
		t.Errorf("git worktree list after !new:\n%s\nwant the main checkout and one agent worktree", wts)
	}
	if got := gitIn(t, repo, "branch", "--list", "agentbridge/*"); strings.Count(got, "agentbridge/") != 2 {
		t.Errorf("branches after !new = %q, want both kept (each holds a commit)", got)
	}
}

// threadText joins the current text of every message of a thread.
func (e *slackEnv) threadText(thread string) string {
	var b strings.Builder
	for _, p := range e.slack.Posts() {
		if cur, ok := e.slack.Current(p.Channel, p.TS); ok && p.ThreadTS == thread {
			b.WriteString(e.text(cur) + "\n")
		}
	}
	return b.String()
}

// TestE2EWarmSpareInWorktree: a profile with worktree: true keeps its warm
// spare (real CLI, bwrap), started in a worktree of its own once the
// workdir is a repository; a new conversation takes the ready spare and
// its agent's commit lands on the spare's agentbridge/ branch, never in
// the main checkout.
func TestE2EWarmSpareInWorktree(t *testing.T) {
	t.Parallel()
	testkit.NeedBwrap(t)
	testkit.NeedTool(t, "git", "apt-get install git")
	e := startSlackBridgeWith(t, profileOptions{extra: "    allowed_tools: [Bash]\n    worktree: true\n    warm_spares: 1\n"})
	repo := e.workdir
	if err := os.WriteFile(filepath.Join(repo, "shared.txt"), []byte("base\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitIn(t, repo, "init", "-q")
	gitIn(t, repo, "add", "shared.txt")
	gitIn(t, repo, "commit", "-qm", "base")
	base := gitIn(t, repo, "rev-parse", "HEAD")
	// A spare that tried before the repository existed failed and is
	// tried again with back-off: a ready one runs in its worktree.
	if !e.bridge.waitLog(ctxTimeout(t, 60*time.Second), `msg="agent: warm spare ready"`) {
		t.Fatalf("no warm spare became ready\nlogs:\n%s", e.bridge.logs)
	}

	ts := e.slack.Mention(slackChan, alice, "[bash echo spare > shared.txt && git add shared.txt && "+
		"git -c user.name=agent -c user.email=agent@example.com commit -qm spare && echo branch=$(git rev-parse --abbrev-ref HEAD)]", "")
	e.waitAnswer(t, ts, "tool said:") // finished: not a live message's cut output
	if !strings.Contains(e.threadText(ts), "tool said: branch=agentbridge/") {
		t.Fatalf("the agent's commit did not land on an agentbridge/ branch\nposts: %s", e.dump())
	}
	if !strings.Contains(e.bridge.logs.String(), `msg="new session on a warm spare"`) {
		t.Errorf("the conversation did not take the warm spare\nlogs:\n%s", e.bridge.logs)
	}
	if b, _ := os.ReadFile(filepath.Join(repo, "shared.txt")); string(b) != "base\n" || gitIn(t, repo, "rev-parse", "HEAD") != base {
		t.Errorf("the main checkout changed: shared.txt %q", b)
	}
}
