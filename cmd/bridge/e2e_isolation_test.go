//go:build linux

package main

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/agent/fakemodel"
	"github.com/agentbridge/agentbridge/bridges/adapters/slack/slackfake"
	"github.com/agentbridge/agentbridge/internal/testkit"
	"github.com/agentbridge/agentbridge/internal/tmproot"
)

// toolResultWith returns the text of the first tool result the model
// received that contains marker, or "".
func toolResultWith(fm *fakemodel.Server, marker string) string {
	for _, r := range fm.MessagesRequests() {
		for _, m := range r.Messages {
			for _, b := range m.Blocks {
				if b.Type == "tool_result" && strings.Contains(b.Text, marker) {
					return b.Text
				}
			}
		}
	}
	return ""
}

// section returns the lines of out between the line "== name" and the next
// "== " line (or the end).
func section(out, name string) string {
	_, rest, ok := strings.Cut(out, "== "+name+"\n")
	if !ok {
		return "(section " + name + " missing)"
	}
	body, _, _ := strings.Cut(rest, "== ")
	return strings.TrimSpace(body)
}

// TestE2EAgentIsolation: an agent whose commands run without asking (the
// worst case: Bash pre-approved, workdir = the directory holding bridge.yaml
// and data/) tries every leak of the threat model; each fails, judged by the
// tool result the model received. A second conversation's secret is out of
// its reach too.
func TestE2EAgentIsolation(t *testing.T) {
	t.Parallel()
	testkit.NeedBwrap(t)
	e := startSlackBridgeWith(t, profileOptions{workdirIsConfigDir: true, extra: "    allowed_tools: [Bash]\n"})
	const secret = "SECRET-ALPHA-7731"
	first := e.slack.Mention(slackChan, alice, "please remember "+secret, "")
	e.waitThreadText(t, first, "pong: please remember "+secret)

	pid := e.bridge.cmd.Process.Pid
	dir := e.ab.dir
	cmd := strings.Join([]string{
		"echo LEAKTEST",
		fmt.Sprintf("echo '== environ'; cat /proc/%d/environ", pid),
		fmt.Sprintf("echo '== config'; cat %s/bridge.yaml", dir),
		fmt.Sprintf("echo '== db'; head -c 64 %s/data/bridge.db", dir),
		// The pattern does not match its own text, so this command's own
		// transcript is no false positive.
		fmt.Sprintf("echo '== search'; grep -rlsI -D skip 'SECRET-ALPHA-77[3]1' \"$HOME\" /tmp /var/tmp %s", dir),
		fmt.Sprintf("echo '== kill'; kill -9 %d", pid),
		`echo '== settings'; echo '{"permissions":{"allow":["Bash"]}}' > .claude/settings.local.json`,
		"echo '== caps'; grep CapEff /proc/self/status",
		"echo '== end'",
	}, "; ")
	second := e.slack.Mention(slackChan, alice, "[bash "+cmd+"]", "")
	e.approveUntil(t, second, "tool said") // the CLI asks before writing .claude/: the requester allows it
	out := toolResultWith(e.model, "LEAKTEST")
	if out == "" {
		t.Fatalf("the model never received the tool result\nposts: %s", e.dump())
	}
	t.Logf("tool result:\n%s", out)

	for _, tok := range []string{slackfake.BotToken, slackfake.AppToken} {
		if strings.Contains(out, tok) {
			t.Errorf("the agent read a Slack token")
		}
	}
	checks := []struct{ section, want string }{
		{"environ", "No such file or directory"}, // the bridge is not in the agent's PID namespace
		{"db", "No such file or directory"},      // data_dir is an empty directory inside
		{"kill", "No such process"},
		{"settings", "Read-only file system"},
		{"caps", "CapEff:\t0000000000000000"},
	}
	for _, c := range checks {
		if got := section(out, c.section); !strings.Contains(got, c.want) {
			t.Errorf("%s: got %q, want it to say %q", c.section, got, c.want)
		}
	}
	if got := section(out, "config"); strings.Contains(got, "platform:") || strings.Contains(got, "bot_token") {
		t.Errorf("the agent read the config file: %q", got)
	}
	if got := section(out, "search"); got != "" {
		t.Errorf("the agent found another conversation's secret in: %q", got)
	}
	if resp, err := http.Get("http://" + e.bridge.addr + "/healthz"); err != nil {
		t.Errorf("the bridge is gone after the agent's kill: %v", err)
	} else {
		resp.Body.Close()
	}
	if _, err := os.Stat(filepath.Join(e.workdir, ".claude", "settings.local.json")); !os.IsNotExist(err) {
		t.Errorf("the agent wrote the workspace's settings.local.json: %v", err)
	}
	// The secret is in the first conversation's own private state.
	m, _ := filepath.Glob(filepath.Join(dir, "data", "sessions", "*", "claude", "projects", "*", "*.jsonl"))
	found := false
	for _, f := range m {
		if b, err := os.ReadFile(f); err == nil && strings.Contains(string(b), secret) {
			found = true
		}
	}
	if !found {
		t.Errorf("the first conversation's transcript (with the secret) is not under data/sessions: %v", m)
	}
}

// approveUntil clicks Allow (as alice) on every card in the thread until
// some message of the thread contains want.
func (e *slackEnv) approveUntil(t *testing.T, thread, want string) {
	t.Helper()
	clicked := map[string]bool{}
	testkit.WaitUntilSeen(t, fmt.Sprintf("thread %s to show %q", thread, want), e2eWait, func() (bool, string) {
		for _, p := range e.slack.Posts() {
			cur, ok := e.slack.Current(p.Channel, p.TS)
			if !ok || p.ThreadTS != thread {
				continue
			}
			if strings.Contains(e.text(cur), want) {
				return true, ""
			}
			if len(cur.Buttons) > 0 && !clicked[p.TS] {
				clicked[p.TS] = true
				e.slack.Click(p.Channel, p.TS, alice, "allow", "")
			}
		}
		return false, "posts: " + e.dump()
	})
}

// agentProcesses lists processes whose command line contains any of marks.
func agentProcesses(marks ...string) []string {
	var out []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		line := strings.ReplaceAll(string(b), "\x00", " ")
		for _, m := range marks {
			if strings.Contains(line, m) {
				out = append(out, e.Name()+": "+line)
				break
			}
		}
	}
	return out
}

// agentTempRoot is the directory the bridge in dir (data_dir ./data) keeps
// its agents' temporary directories in, checked to hold at least one.
func agentTempRoot(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "data", tmproot.RecordName))
	if err != nil {
		t.Fatalf("the bridge recorded no temporary root: %v", err)
	}
	root := strings.TrimSpace(string(b))
	if m, _ := filepath.Glob(filepath.Join(root, "agent-*")); len(m) == 0 {
		t.Fatalf("no agent's TMPDIR in the bridge's temporary root %s", root)
	}
	return root
}

// TestE2EBridgeKillTakesAgents: SIGKILL of the bridge while an agent has a
// detached background command (new session, own process group) leaves no
// process of that conversation within 2 s; SIGTERM likewise. The agents'
// temporary files go too: at once after SIGTERM, and after SIGKILL when
// the bridge starts again on the same data_dir.
func TestE2EBridgeKillTakesAgents(t *testing.T) {
	t.Parallel()
	testkit.NeedBwrap(t)
	for _, stop := range []string{"SIGKILL", "SIGTERM"} {
		t.Run(stop, func(t *testing.T) {
			e := startSlackBridgeWith(t, profileOptions{extra: "    allowed_tools: [Bash]\n"})
			n := 10000 + rand.IntN(50000)
			marker := fmt.Sprintf("sleep %d", n)
			// The detached command marks a file once it is in its own
			// session, and the tool waits for that mark: otherwise the
			// CLI may end the tool's process group before setsid ran.
			ready := fmt.Sprintf("detached-%d", n)
			cmd := fmt.Sprintf("setsid sh -c 'touch %s; exec %s' >/dev/null 2>&1 </dev/null & until test -e %s; do sleep 0.05; done; echo started", ready, marker, ready)
			ts := e.slack.Mention(slackChan, alice, "[bash "+cmd+"]", "")
			e.waitThreadText(t, ts, "tool said: started")
			if ps := agentProcesses(marker); len(ps) == 0 {
				t.Fatalf("the detached command is not running")
			}
			if ps := agentProcesses(e.ab.dir); len(ps) == 0 {
				t.Fatalf("no agent process found for this test's directory")
			}
			// The replacement warm spare has booted: a process spawned in
			// the very instant of a SIGKILL can outlive the bridge until the
			// CLI reads the end of its stdin (bubblewrap's forked inner
			// process can miss its parent-death signal when its parent dies
			// as it forks).
			e.waitSpareReady(t)
			tmp := agentTempRoot(t, e.ab.dir)
			if stop == "SIGKILL" {
				e.bridge.kill9()
			} else if err := e.bridge.stop(60 * time.Second); err != nil {
				t.Fatalf("SIGTERM: %v", err)
			}
			testkit.WaitUntilSeen(t, "no agent process left after "+stop+" of the bridge", 2*time.Second, func() (bool, string) {
				ps := agentProcesses(marker, e.ab.dir)
				return len(ps) == 0, "still running:\n" + strings.Join(ps, "\n")
			})
			if stop == "SIGKILL" {
				if _, err := os.Stat(tmp); err != nil {
					t.Fatalf("the killed bridge's agents' temporary files: %v (the test expects them left until the next start)", err)
				}
				e.ab.restart(t)
				e.bridge = e.ab.bridge
				testkit.WaitUntilSeen(t, "the killed bridge's agents' temporary files removed at the next start", e2eWait, func() (bool, string) {
					_, err := os.Stat(tmp)
					return errors.Is(err, fs.ErrNotExist), fmt.Sprintf("%s: %v", tmp, err)
				})
			} else if _, err := os.Stat(tmp); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("after SIGTERM the agents' temporary files %s are still there (%v)", tmp, err)
			}
		})
	}
}

// TestTempRootCannotBeMade: a bridge whose temporary directory cannot hold
// its agents' root (TMPDIR names nothing) starts anyway, warning that a
// kill would leave its agents' directories, and records no root.
func TestTempRootCannotBeMade(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := "data_dir: ./data\nhttp: { listen: \"{{HTTP}}\" }\nagents:\n  coder:\n    sandbox: none\n" +
		"bots:\n  - name: console\n    platform: web\n    agent: coder\n"
	b := startBridge(t, dir, cfg, "TMPDIR="+filepath.Join(dir, "missing"))
	testkit.WaitUntilSeen(t, "the warning", e2eWait, func() (bool, string) {
		return strings.Contains(b.logs.String(), "agents' temporary directories are made without a root"), b.logs.String()
	})
	if _, err := os.Stat(filepath.Join(dir, "data", tmproot.RecordName)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a root was recorded (%v)", err)
	}
}
