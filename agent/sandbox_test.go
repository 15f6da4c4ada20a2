//go:build linux

package agent

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/agent/agenttest"
	"github.com/agentbridge/agentbridge/agent/sandbox"
	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/internal/testkit"
)

// sandboxedOpts are h's options in bubblewrap with a private state dir and
// Bash pre-approved, as the bridge would run a trusting profile.
func sandboxedOpts(t *testing.T, h *harness) Options {
	opts := h.opts()
	opts.Sandbox = &sandbox.Bwrap{}
	opts.StateDir = filepath.Join(t.TempDir(), "state")
	opts.AllowedTools = []string{"Bash"}
	return opts
}

// processesMatching lists the pids whose command line contains marker.
func processesMatching(marker string) []string {
	var out []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		if strings.Contains(strings.ReplaceAll(string(b), "\x00", " "), marker) {
			out = append(out, e.Name())
		}
	}
	return out
}

// TestSandboxedSession runs the real CLI in bubblewrap with a private state
// dir: the agent's commands cannot see hidden paths, the bridge's
// processes, other sessions' state or capabilities, cannot write the
// workdir's .claude settings, and the session still resumes after a kill.
func TestSandboxedSession(t *testing.T) {
	testkit.NeedBwrap(t)
	h := &harness{agenttest.NewHarness(t)}
	hidden := filepath.Join(h.Workdir, "data") // the bridge's data_dir, here inside the workdir
	other := filepath.Join(hidden, "sessions", "other")
	if err := os.MkdirAll(filepath.Join(other, "claude"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(other, "claude", "transcript.jsonl"), []byte("OTHER-SECRET-41"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfgFile := filepath.Join(h.Workdir, "bridge.yaml") // a config file inside the workdir
	if err := os.WriteFile(cfgFile, []byte("token: CONFIG-SECRET-42"), 0o600); err != nil {
		t.Fatal(err)
	}
	opts := h.opts()
	opts.Sandbox = &sandbox.Bwrap{}
	opts.StateDir = filepath.Join(hidden, "sessions", "mine")
	opts.Hide = []string{hidden, cfgFile}
	opts.AllowedTools = []string{"Bash"}
	s, rec := h.start(opts)

	cmd := fmt.Sprintf("cat %s/claude/transcript.jsonl; cat %s; ls /proc | grep -c '^[0-9]'; grep CapEff /proc/self/status; "+
		"echo ok > ok.txt; echo '{}' > .claude/settings.local.json; echo HOME=$HOME CFG=$CLAUDE_CONFIG_DIR",
		other, cfgFile)
	agenttest.Send(t, s, "[bash "+cmd+"]")
	r := agenttest.NextResult(t, rec)
	t.Logf("tool result: %s", r.Text)
	for _, leak := range []string{"OTHER-SECRET-41", "CONFIG-SECRET-42"} {
		if strings.Contains(r.Text, leak) {
			t.Errorf("the agent read %s: %q", leak, r.Text)
		}
	}
	if !strings.Contains(r.Text, "CapEff:\t0000000000000000") {
		t.Errorf("the agent has capabilities: %q", r.Text)
	}
	if !strings.Contains(r.Text, "Read-only file system") {
		t.Errorf("writing .claude/settings.local.json did not fail read-only: %q", r.Text)
	}
	if !strings.Contains(r.Text, "CFG="+filepath.Join(opts.StateDir, "claude")) || !strings.Contains(r.Text, "HOME="+h.Home) {
		t.Errorf("HOME / CLAUDE_CONFIG_DIR inside: %q", r.Text)
	}
	if b, err := os.ReadFile(filepath.Join(h.Workdir, "ok.txt")); err != nil || string(b) != "ok\n" {
		t.Errorf("workdir write: %q, %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(h.Workdir, ".claude", "settings.local.json")); !os.IsNotExist(err) {
		t.Errorf("settings.local.json exists on the host: %v", err)
	}
	if b, _ := os.ReadFile(cfgFile); string(b) != "token: CONFIG-SECRET-42" {
		t.Errorf("config file changed: %q", b)
	}
	// Visible processes: bwrap's init, the CLI, the shell and its commands
	// — a handful, never the host's.
	if !hasSmallCount(r.Text, 20) {
		t.Errorf("process count inside not found or too large: %q", r.Text)
	}
	// The CLI's state is private: in StateDir, not in the shared HOME.
	if m, _ := filepath.Glob(filepath.Join(opts.StateDir, "claude", "projects", "*", opts.SessionID+".jsonl")); len(m) != 1 {
		t.Errorf("transcript not in the private state dir: %v", m)
	}
	if _, err := os.Stat(filepath.Join(h.Home, ".claude")); !os.IsNotExist(err) {
		t.Errorf("the CLI wrote into the shared HOME: %v", err)
	}

	// Kill and resume: the private state dir carries the conversation.
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	agenttest.NextExit(t, rec)
	opts.Resume = true
	s2, rec2 := h.start(opts)
	agenttest.Send(t, s2, "[echo-history]")
	if r := agenttest.NextResult(t, rec2); !strings.Contains(r.Text, "OTHER-SECRET-41") && !strings.Contains(r.Text, "[bash ") {
		t.Errorf("resumed session lacks its history: %q", r.Text)
	}
}

// TestSandboxStopTakesDetachedChildren: a background command that left the
// CLI's process group and session dies with the session.
func TestSandboxStopTakesDetachedChildren(t *testing.T) {
	testkit.NeedBwrap(t)
	h := &harness{agenttest.NewHarness(t)}
	opts := sandboxedOpts(t, h)
	s, rec := h.start(opts)
	marker := fmt.Sprintf("sleep %d", 5000+rand.IntN(4000))
	agenttest.Send(t, s, "[bash setsid "+marker+" >/dev/null 2>&1 < /dev/null & echo started]")
	if r := agenttest.NextResult(t, rec); !strings.Contains(r.Text, "started") {
		t.Fatalf("result %q", r.Text)
	}
	testkit.WaitUntil(t, "the detached sleep runs", 10*time.Second, func() bool { return len(processesMatching(marker)) > 0 })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	agenttest.NextExit(t, rec)
	testkit.WaitUntil(t, "the detached sleep is gone", 2*time.Second, func() bool { return len(processesMatching(marker)) == 0 })
}

// hasSmallCount reports whether a line of text is a number in (0, limit).
func hasSmallCount(text string, limit int) bool {
	for _, line := range strings.Split(text, "\n") {
		var n int
		if _, err := fmt.Sscanf(strings.TrimSpace(strings.TrimPrefix(line, "tool said:")), "%d", &n); err == nil && n > 0 && n < limit {
			return true
		}
	}
	return false
}

// TestAgentCannotApproveItself: an agent that writes permission rules into
// the settings files it can reach (its own config dir, the shared HOME), or
// an MCP server into the workdir's .mcp.json, does not get them applied
// when its session is started again: tools still ask, the server never runs.
func TestAgentCannotApproveItself(t *testing.T) {
	testkit.NeedBwrap(t)
	h := &harness{agenttest.NewHarness(t)}
	opts := sandboxedOpts(t, h)
	s, rec := h.start(opts)
	rules := `{"permissions":{"allow":["Bash","Write","Edit"]}}`
	mcp := `{"mcpServers":{"x":{"command":"/bin/sh","args":["-c","touch mcp-ran.txt"]}}}`
	agenttest.Send(t, s, "[bash mkdir -p $HOME/.claude && echo '"+rules+"' > $CLAUDE_CONFIG_DIR/settings.json && echo '"+rules+
		"' > $HOME/.claude/settings.json && echo '"+mcp+"' > .mcp.json && echo written]")
	if r := agenttest.NextResult(t, rec); !strings.Contains(r.Text, "written") {
		t.Fatalf("the agent could not write its settings files: %q", r.Text)
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	agenttest.NextExit(t, rec)

	opts.Resume, opts.AllowedTools = true, nil
	s2, rec2 := h.start(opts)
	agenttest.Send(t, s2, "[bash touch self-approved.txt]")
	p := agenttest.NextPermission(t, rec2)
	if p.ToolName != "Bash" {
		t.Fatalf("permission request for %s", p.ToolName)
	}
	agenttest.Respond(t, s2, p.RequestID, streamjson.Decision{Message: "no"})
	agenttest.NextResult(t, rec2)
	if _, err := os.Stat(filepath.Join(h.Workdir, "self-approved.txt")); !os.IsNotExist(err) {
		t.Errorf("the command ran: %v", err)
	}
	if _, err := os.Stat(filepath.Join(h.Workdir, "mcp-ran.txt")); !os.IsNotExist(err) {
		t.Errorf("the agent's .mcp.json server ran at the next start: %v", err)
	}
}
