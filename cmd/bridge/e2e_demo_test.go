package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/bridges/adapters/web/webtest"
	"github.com/agentbridge/agentbridge/config"
)

// makeRunStart bounds how long `make run` may take to build the bridge (Go
// caches warm from building the test binary) and print the sign-in link.
const makeRunStart = 5 * time.Minute

// TestMakeRunDemo: `make run` on a clean clone with no config and no
// credentials reaches a working demo chat. It says it builds bin/bridge
// (a fresh clone has none) before the build, writes the minimal config,
// starts the bridge in demo mode and prints the sign-in link; through HTTP
// alone a new user signs in, sees the page labelled as a demo and
// completes turns with the real CLI against the built-in scripted model: a
// streamed answer, a permission card approved with its button (the command
// ran in the agent's workdir) and a question card answered with its button.
func TestMakeRunDemo(t *testing.T) {
	t.Parallel()
	addr := freeAddr(t)
	start := time.Now()
	m := startMakeRun(t, "BRIDGE_LISTEN="+addr) // and no ANTHROPIC_API_KEY / CLAUDE_CODE_OAUTH_TOKEN
	link := m.waitOutput(t, regexp.MustCompile(`(?m)^    (http://\S+/signin#token=\S+)$`), makeRunStart)[1]
	t.Logf("make run printed the sign-in link after %v", time.Since(start).Round(100*time.Millisecond))

	written, err := os.ReadFile(filepath.Join(m.dir, "bridge.yaml"))
	if err != nil || string(written) != string(config.Minimal()) {
		t.Errorf("make run wrote bridge.yaml (%v):\n%s\nwant the minimal config", err, written)
	}
	if out := m.out.String(); !strings.Contains(out, "DEMO MODE") || !strings.Contains(out, "addr="+addr) {
		t.Errorf("the bridge did not log demo mode on %s", addr)
	} else if n := strings.Count(out, "scripted model, not to Claude"); n != 1 {
		t.Errorf("the demo notice shows %d times, want once:\n%s", n, out)
	}
	if out := m.out.String(); !regexp.MustCompile(`(?m)^building bin/bridge( \(the first build compiles SQLite: about 90 s\))?…$`).MatchString(out) {
		t.Errorf("make run built bin/bridge without saying so first:\n%s", out)
	}
	if out := m.out.String(); !strings.Contains(out, "\n\n=== Web console: sign in as admin with this link ===\n\n    "+link+"\n\n") {
		t.Errorf("the sign-in link does not stand apart with its label:\n%s", out)
	}

	w := webtest.SignIn(t, link)
	if page := w.NewChat(); !strings.Contains(page, `id="demo-label"`) {
		t.Errorf("the chat page is not labelled as a demo:\n%s", page)
	}
	ev := w.Events()

	turn := time.Now()
	w.Send("hello")
	ev.Wait(t, "This is agentbridge's demo mode", false, e2eWait)
	t.Logf("first demo answer (agent start included) after %v", time.Since(turn).Round(100*time.Millisecond))

	w.Send("run a command")
	card, allow := webtest.CardChoice(t, ev.Wait(t, "hello.txt", true, e2eWait), "Allow")
	w.Click(card, allow)
	ev.Wait(t, "The command ran in my sandbox and printed", false, e2eWait)
	if _, err := os.Stat(filepath.Join(m.dir, "workspace", "hello.txt")); err != nil {
		t.Errorf("the approved command did not run in the workdir: %v", err)
	}

	w.Send("ask me a question")
	card, slack := webtest.CardChoice(t, ev.Wait(t, "Which chat platform", true, e2eWait), "Slack")
	w.Click(card, slack)
	ev.Wait(t, "You chose Slack", false, e2eWait)
}
