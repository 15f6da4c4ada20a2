package core_test

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/kits/bridgetest"
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

// startElicit is a live core whose agents have the elicit MCP server.
func startElicit(t *testing.T, ls liveSetup) *live {
	t.Helper()
	args := elicitMCPArgs(t)
	ls.configure = func(c *config.Config) {
		a := c.Agents["coder"]
		a.Args = append(a.Args, args...)
		a.AllowedTools = append(a.AllowedTools, "mcp__elicit__ask")
	}
	return startLive(t, ls)
}

// Issue 26, item 5: an elicitation from a real MCP server, through the
// pinned CLI, becomes a card with the authority of a permission card: a
// two-field form (an enum and a boolean) is toggled and submitted by the
// requester after a stranger's click was refused; a one-field text form is
// answered by reply; Decline declines; a form no card can show (a choice
// beside typed text) is cancelled and told. (The CLI itself refuses
// schemas with non-primitive fields before they reach the host.) Each answer reaches the server (the tool's result).
func TestAcceptanceElicitationCard(t *testing.T) {
	t.Parallel()
	l := startElicit(t, liveSetup{})
	k := key("elicit")
	click := func(cardID, choice, user string) *bridgetest.Clicked {
		t.Helper()
		c, err := l.plat.Click(ctxT(t), k, cardID, choice, user, user)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}

	l.send(k, "m1", "alice", `[tool mcp__elicit__ask {"kind":"form"}]`)
	card := l.waitLiveCard(k, "Where should I deploy?")
	for _, want := range []string{"`elicit`", "Run the migrations too", "Environment", "staging", "production"} {
		if !strings.Contains(card.Text, want) {
			t.Errorf("card lacks %q: %q", want, card.Text)
		}
	}
	if r := click(card.CardID, "q1.0", "mallory").WaitReply(t, liveTimeout); !strings.Contains(r, "only @alice") {
		t.Errorf("a stranger's click: %q", r)
	}
	click(card.CardID, "q0.0", "alice") // Run the migrations too: Yes
	if r := click(card.CardID, bridges.ChoiceSubmit, "alice").WaitReply(t, liveTimeout); !strings.Contains(r, "Answer `Environment` first") {
		t.Errorf("submit without the required field: %q", r)
	}
	click(card.CardID, "q1.0", "alice") // Environment: staging
	click(card.CardID, bridges.ChoiceSubmit, "alice")
	l.waitReply(k, `elicitation result: {"action":"accept","content":{"confirm":true,"env":"staging"}}`)
	l.waitFinal(k)

	l.send(k, "m2", "alice", `[tool mcp__elicit__ask {"kind":"text"}]`)
	l.waitLiveCard(k, "Release note")
	l.send(k, "m3", "alice", "ship the fix")
	l.waitReply(k, `elicitation result: {"action":"accept","content":{"note":"ship the fix"}}`)
	l.waitFinal(k)

	l.send(k, "m4", "alice", `[tool mcp__elicit__ask {"kind":"form"}]`)
	card = l.waitLiveCard(k, "Where should I deploy?", card.CardID)
	click(card.CardID, bridges.ChoiceDeny, "carol") // an approver
	l.waitReply(k, `elicitation result: {"action":"decline"}`)
	l.waitLive(k, "Declined by @carol")
	l.waitFinal(k)

	l.send(k, "m5", "alice", `[tool mcp__elicit__ask {"kind":"mixed"}]`)
	n := l.waitLive(k, "cannot show")
	if !strings.Contains(n.Text, "Where and why?") || !strings.Contains(n.Text, `field "reason" wants typed text beside other fields`) {
		t.Errorf("notice = %q", n.Text)
	}
	l.waitReply(k, `elicitation result: {"action":"cancel"}`)
	l.waitFinal(k)
}

// An elicitation nobody answers within approval_timeout is declined and
// its card shows it expired.
func TestAcceptanceElicitationTimeout(t *testing.T) {
	t.Parallel()
	l := startElicit(t, liveSetup{approvalTimeout: 2 * time.Second})
	k := key("elicit-timeout")
	l.send(k, "m1", "alice", `[tool mcp__elicit__ask {"kind":"form"}]`)
	l.waitLiveCard(k, "Where should I deploy?")
	l.waitReply(k, `elicitation result: {"action":"decline"}`)
	l.waitLive(k, "Expired")
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
