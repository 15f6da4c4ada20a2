//go:build linux

package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/agentbridge/agentbridge/internal/testkit"
)

// TestE2EWorktreeFilterEscape reproduces attack 1 of issue 20 through the
// real binary, the real CLI and bwrap: with worktree: true, a command the
// rules allow makes a sub-repository in the agent's worktree, stages it
// as a gitlink, and gives it a clean filter (with .gitattributes) that
// copies the bridge's config to a directory outside the sandbox. Then
// someone sends !new: the bridge's git status of the worktree enters the
// sub-repository and runs the filter — in the sandbox, where neither the
// config file nor that directory exists. The config is not copied, and the
// worktree, which has uncommitted changes, is kept and the thread told.
func TestE2EWorktreeFilterEscape(t *testing.T) {
	t.Parallel()
	testkit.NeedBwrap(t)
	testkit.NeedTool(t, "git", "apt-get install git")
	// No warm spares: the test counts the repository's worktrees, and a
	// spare holds one of its own (see core's TestWarmSparesWithWorktreeProfile).
	e := startSlackBridgeWith(t, profileOptions{extra: "    worktree: true\n    warm_spares: 0\n    rules:\n" +
		"      - { tool: Write, action: allow }\n" +
		"      - { tool: Bash, match: \"sh plant.sh\", action: allow }\n"})
	repo := e.workdir
	if err := os.WriteFile(filepath.Join(repo, "README"), []byte("readme\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitIn(t, repo, "init", "-q")
	gitIn(t, repo, "add", "README")
	gitIn(t, repo, "commit", "-qm", "base")

	// Outside every sandbox: the bridge's config and a directory beside
	// data_dir that the planted filter writes to.
	dir := e.ab.dir
	cfgFile, canary := filepath.Join(dir, "bridge.yaml"), filepath.Join(dir, "canary")
	if err := os.Mkdir(canary, 0o755); err != nil {
		t.Fatal(err)
	}
	filter := "cp " + cfgFile + " " + canary + "/stolen.yaml; touch " + canary + "/ran; cat"
	plant := strings.Join([]string{
		"set -e",
		"git init -q sub && cd sub",
		"printf 'x\\n' > a.txt && printf 'a.txt filter=pwn\\n' > .gitattributes",
		"git add . && git -c user.name=a -c user.email=a@example.com commit -qm sub",
		"git config filter.pwn.clean '" + filter + "'",
		// Same size, later time: git status must hash it, through the filter.
		"printf 'y\\n' > a.txt && touch -d '+1 hour' a.txt",
		"cd .. && git add sub 2>/dev/null",
		"echo planted $(git status --porcelain 2>/dev/null | tr '\\n' ' ')",
	}, "\n") + "\n"

	thread := e.slack.Mention(slackChan, alice, "[write plant.sh "+strconv.Quote(plant)+"]", "")
	e.waitThreadText(t, thread, "tool said:")
	e.slack.Mention(slackChan, alice, "[bash sh plant.sh]", thread)
	e.waitThreadText(t, thread, "tool said: planted")
	if !strings.Contains(e.threadText(thread), "planted AM sub") {
		t.Fatalf("the sub-repository is not staged as a gitlink\nposts: %s", e.dump())
	}
	if ents, _ := os.ReadDir(canary); len(ents) > 0 {
		t.Fatalf("the agent wrote outside its sandbox before !new: %v", ents)
	}

	e.slack.Mention(slackChan, alice, "!new", thread)
	e.waitThreadText(t, thread, "Started a fresh session")
	text := e.threadText(thread)
	if ents, _ := os.ReadDir(canary); len(ents) > 0 {
		t.Fatalf("!new ran the agent's filter outside the sandbox: %s holds %v\nposts: %s", canary, ents, e.dump())
	}
	if !strings.Contains(text, "📌 Worktree kept") {
		t.Errorf("!new of a worktree with uncommitted changes did not keep it and say so\nposts: %s", e.dump())
	}
	wts := gitIn(t, repo, "worktree", "list", "--porcelain")
	if strings.Count(wts, "worktree ") != 2 {
		t.Errorf("git worktree list after !new:\n%s\nwant the main checkout and the kept worktree", wts)
	}
}
