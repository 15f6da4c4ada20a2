package core_test

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/config"
)

// elicitMCPArgs builds agent/testdata/elicitmcp (a stdio MCP server whose
// tool "ask" calls elicitation/create) and returns the profile flags that
// give the agent it. Profiles cannot name MCP servers in the config (args
// refuses --mcp-config); the test sets the flags directly.
func elicitMCPArgs(t *testing.T) []string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "elicitmcp")
	if out, err := exec.Command("go", "build", "-o", bin, "../../agent/testdata/elicitmcp").CombinedOutput(); err != nil {
		t.Fatalf("build elicitmcp: %v\n%s", err, out)
	}
	b, err := json.Marshal(map[string]any{"mcpServers": map[string]any{"elicit": map[string]any{"type": "stdio", "command": bin}}})
	if err != nil {
		t.Fatal(err)
	}
	return []string{"--mcp-config", string(b)}
}

// Issue 26, item 5: an elicitation from a real MCP server, through the
// pinned CLI, is answered (cancel, the bridge shows no MCP forms yet) and
// told in the conversation; the turn ends instead of waiting forever.
func TestAcceptanceElicitationCancelled(t *testing.T) {
	t.Parallel()
	args := elicitMCPArgs(t)
	l := startLive(t, liveSetup{configure: func(c *config.Config) {
		a := c.Agents["coder"]
		a.Args = append(a.Args, args...)
		a.AllowedTools = append(a.AllowedTools, "mcp__elicit__ask")
	}})
	k := key("elicit")
	l.send(k, "m1", "alice", `[tool mcp__elicit__ask {"kind":"form"}]`)
	n := l.waitLive(k, "cannot show MCP forms yet")
	if !strings.Contains(n.Text, "`elicit`") || !strings.Contains(n.Text, "Where should I deploy?") {
		t.Errorf("notice = %q", n.Text)
	}
	l.waitReply(k, `elicitation result: {"action":"cancel"}`)
	l.waitFinal(k)
}

// Issue 26, item 5: running background tasks appear in !status and in the
// operator's live agents (LiveAgents), from the CLI's
// background_tasks_changed; they leave when the task ends.
func TestAcceptanceBackgroundTasksInStatus(t *testing.T) {
	t.Parallel()
	l := startLive(t, liveSetup{})
	k := key("bg")
	l.send(k, "m1", "alice", "[bgbash sleep 4]")
	l.waitLive(k, "Background task started")
	l.waitReply(k, "started in background")
	l.send(k, "m2", "alice", "!status")
	st := l.waitLive(k, "background tasks: 1")
	if !strings.Contains(st.Text, "📊 Session") {
		t.Errorf("status = %q", st.Text)
	}
	live, err := l.core.LiveAgents(ctxT(t))
	if err != nil || len(live) != 1 || len(live[0].BackgroundTasks) != 1 {
		t.Fatalf("LiveAgents = %+v, %v", live, err)
	}
	l.waitLive(k, "background done")
	deadline := time.Now().Add(liveTimeout)
	for {
		live, err = l.core.LiveAgents(ctxT(t))
		if err == nil && len(live) == 1 && len(live[0].BackgroundTasks) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the finished task is still listed: %+v, %v", live, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	l.send(k, "m3", "alice", "!status")
	l.waitFinal(k)
	var last string
	for _, m := range l.plat.Messages(k) {
		if strings.Contains(m.Text, "📊 Session") {
			last = m.Text
		}
	}
	if strings.Contains(last, "background tasks") {
		t.Errorf("the last status still lists background tasks: %q", last)
	}
}
