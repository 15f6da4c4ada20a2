package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/agent/fakemodel"
	"github.com/agentbridge/agentbridge/bridges/adapters/slack/slackfake"
	"github.com/agentbridge/agentbridge/bridges/features/handoff"
	"github.com/agentbridge/agentbridge/internal/testkit"
	"github.com/agentbridge/agentbridge/store"
)

// Handoff tokens of the e2e tests: alice and bob may both talk to the bot;
// bob never writes in alice's thread.
const (
	aliceToken = "alice-handoff-token-0123456789"
	bobToken   = "bob-handoff-token-0123456789ab"
	bob        = "UBOB"
)

// handoffTop is the handoff section of the e2e tests' config.
var handoffTop = fmt.Sprintf(`handoff:
  users:
    - { name: alice, token: %q, as: { team: %s } }
    - { name: bob, token: %q, as: { team: %s } }
`, aliceToken, alice, bobToken, bob)

// terminal is a `bridge attach` (or other hand-off command) child process.
type terminal struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   *testkit.SyncBuffer
	done  chan struct{}
	err   error
}

// handoffCmd starts the bridge binary with a hand-off command; token ""
// leaves BRIDGE_HANDOFF_TOKEN unset.
func handoffCmd(t *testing.T, token string, env []string, args ...string) *terminal {
	t.Helper()
	tm := &terminal{out: &testkit.SyncBuffer{}, done: make(chan struct{})}
	tm.cmd = exec.Command(bridgeBin, args...)
	tm.cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}, env...)
	if token != "" {
		tm.cmd.Env = append(tm.cmd.Env, handoff.TokenEnv+"="+token)
	}
	tm.cmd.Stdout, tm.cmd.Stderr = tm.out, tm.out
	var err error
	if tm.stdin, err = tm.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if err := tm.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { tm.err = tm.cmd.Wait(); close(tm.done) }()
	t.Cleanup(func() {
		tm.stdin.Close()
		select {
		case <-tm.done:
		case <-time.After(10 * time.Second):
			_ = tm.cmd.Process.Kill()
			<-tm.done
		}
	})
	return tm
}

// run waits for a hand-off command to exit and returns its output and exit code.
func (tm *terminal) run(t *testing.T) (string, int) {
	t.Helper()
	tm.stdin.Close()
	select {
	case <-tm.done:
	case <-time.After(e2eWait):
		t.Fatalf("command did not exit; output:\n%s", tm.out)
	}
	return tm.out.String(), tm.cmd.ProcessState.ExitCode()
}

// waitOut waits until the terminal printed want.
func (tm *terminal) waitOut(t *testing.T, want string) {
	t.Helper()
	testkit.WaitUntilSeen(t, fmt.Sprintf("the terminal to print %q", want), e2eWait, func() (bool, string) {
		out := tm.out.String()
		if strings.Contains(out, want) {
			return true, ""
		}
		select {
		case <-tm.done:
			t.Fatalf("terminal exited (%v) before printing %q:\n%s", tm.err, want, tm.out)
		default:
		}
		return false, "\n" + out
	})
}

// typeLine types line into the terminal.
func (tm *terminal) typeLine(t *testing.T, line string) {
	t.Helper()
	if _, err := io.WriteString(tm.stdin, line+"\n"); err != nil {
		t.Fatalf("type %q: %v", line, err)
	}
}

var attachCmdRE = regexp.MustCompile(`bridge attach ([0-9a-f-]{36})`)

// TestHandoffE2E is issue 26's hand-off acceptance, through the binary
// with the real CLI, the fake model and the fake Slack: !handoff answers
// privately; a Slack thread's session continues in `bridge attach` (same
// agent session); a card raised by the terminal's turn is decided in
// Slack and another in the terminal; the thread's next message is
// answered with the terminal's turns in the history; unauthorised
// attaches are refused; `bridge export` writes a transcript that plain
// `claude --resume` continues; `bridge import` continues a local session
// in a new Slack thread with its history.
func TestHandoffE2E(t *testing.T) {
	t.Parallel()
	e := startSlackBridgeAccess(t, profileOptions{top: handoffTop}, fmt.Sprintf("users: [%s, %s]", alice, bob))
	base := "http://" + e.bridge.addr
	ts := e.slack.Mention(slackChan, alice, "hello there", "")
	e.waitThreadText(t, ts, "pong: hello there")

	// !handoff: privately (an ephemeral in the thread), with the command.
	e.slack.SendMessage(slackChan, alice, "!handoff", ts)
	eph, err := e.slack.WaitForEphemeral(func(m slackfake.Ephemeral) bool {
		return m.User == alice && attachCmdRE.MatchString(m.Text)
	}, e2eWait)
	if err != nil {
		t.Fatalf("no private !handoff answer: %v\nposts: %s", err, e.dump())
	}
	conv := attachCmdRE.FindStringSubmatch(eph.Text)[1]
	for _, p := range e.slack.Posts() {
		if strings.Contains(p.Text, "bridge attach") {
			t.Errorf("!handoff answered in public: %q", p.Text)
		}
	}

	// Unauthorised attaches are refused, each saying why.
	for _, tc := range []struct {
		name, token, want string
		code              int
	}{
		{"no token", "", "set BRIDGE_HANDOFF_TOKEN", exitUsage},
		{"wrong token", "not-a-token-0123456789abcdef", "unknown handoff token", exitRuntime},
		{"not a participant", bobToken, "bob (UBOB) does not take part in conversation", exitRuntime},
	} {
		out, code := handoffCmd(t, tc.token, nil, "attach", "-url", base, conv).run(t)
		if code != tc.code || !strings.Contains(out, tc.want) {
			t.Errorf("%s: exit %d, output %q; want exit %d and %q", tc.name, code, out, tc.code, tc.want)
		}
	}

	// Alice attaches; the thread says so.
	tm := handoffCmd(t, aliceToken, nil, "attach", "-url", base, conv)
	tm.waitOut(t, "attached to conversation "+conv)
	e.waitThreadText(t, ts, "alice attached a terminal")

	// A turn from the terminal: its card shows in Slack and in the
	// terminal; decided in Slack, the terminal sees the outcome and the
	// answer.
	tm.typeLine(t, "[bash touch fromterm.txt]")
	card := e.waitCard(t, ts)
	tm.waitOut(t, "[1] Allow (y)")
	e.slack.Click(slackChan, card.TS, alice, "allow", "")
	tm.waitOut(t, "┗ ")
	tm.waitOut(t, "tool said")
	if _, err := os.Stat(filepath.Join(e.workdir, "fromterm.txt")); err != nil {
		t.Errorf("the tool allowed in Slack did not run: %v", err)
	}
	// A second card, decided in the terminal: Slack sees it decided.
	tm.typeLine(t, "[bash touch termdecided.txt]")
	card2, err := e.slack.WaitForPost(func(m slackfake.Message) bool {
		return m.ThreadTS == ts && len(m.Buttons) > 0 && m.TS != card.TS
	}, e2eWait)
	if err != nil {
		t.Fatalf("no second card: %v", err)
	}
	tm.waitOut(t, "termdecided.txt")
	testkit.WaitUntil(t, "the second card in the terminal", e2eWait, func() bool { return strings.Count(tm.out.String(), "[1] Allow (y)") >= 2 })
	tm.typeLine(t, "y")
	if err := e.slack.WaitFor(func() bool {
		cur, _ := e.slack.Current(slackChan, card2.TS)
		return len(cur.Buttons) == 0
	}, e2eWait); err != nil {
		t.Fatalf("the card decided in the terminal still has buttons in Slack: %s", e.dump())
	}
	testkit.WaitUntil(t, "termdecided.txt", e2eWait, func() bool {
		_, err := os.Stat(filepath.Join(e.workdir, "termdecided.txt"))
		return err == nil
	})

	// Back in Slack: the next message is answered with the terminal's
	// turns in the history, by the same session.
	e.slack.SendMessage(slackChan, alice, "[echo-history] what happened?", ts)
	e.waitThreadText(t, ts, "history: hello there")
	reqs := e.model.MessagesRequests()
	last := reqs[len(reqs)-1]
	if body := string(last.Body); !strings.Contains(body, "fromterm.txt") || !strings.Contains(body, "termdecided.txt") {
		t.Errorf("the thread's next request lacks the terminal's turns: %s", fakemodel.LastUserText(last))
	}
	sessions := map[string]bool{}
	for _, r := range reqs {
		if id := r.Header.Get("X-Claude-Code-Session-Id"); id != "" {
			sessions[id] = true
		}
	}
	if len(sessions) != 1 {
		t.Errorf("Slack and the terminal used %d sessions, want 1: %v", len(sessions), sessions)
	}
	// …and the same process: the session's agent started once.
	sid := regexp.MustCompile(`; session ([0-9a-f-]{36})`).FindStringSubmatch(tm.out.String())
	if sid == nil || !sessions[sid[1]] {
		t.Fatalf("the terminal did not name the thread's session %v:\n%s", sessions, tm.out)
	}
	started := 0
	for _, l := range strings.Split(e.bridge.logs.String(), "\n") {
		if strings.Contains(l, `msg="agent started"`) && strings.Contains(l, "session="+sid[1]) {
			started++
		}
	}
	if started != 1 {
		t.Errorf("the session's agent started %d times, want once (the terminal used the live process)", started)
	}
	tm.waitOut(t, ": [echo-history] what happened?") // the terminal sees the Slack turn too
	tm.waitOut(t, "history: hello there")
	if strings.Contains(tm.out.String(), "» alice: [bash") {
		t.Errorf("the terminal repeats its own messages:\n%s", tm.out)
	}

	// Detach: the thread says so, and the log has the audit trail.
	out, code := tm.run(t)
	if code != 0 || !strings.Contains(out, "detached") {
		t.Errorf("detach: exit %d\n%s", code, out)
	}
	if t.Failed() {
		t.Logf("terminal:\n%s\nslack:%s", out, e.dump())
	}
	e.waitThreadText(t, ts, "alice's terminal detached")
	for _, want := range []string{"action=attach person=alice user=UALICE conversation=" + conv, "action=detach person=alice"} {
		if !e.bridge.waitLog(ctxTimeout(t, e2eWait), want) {
			t.Errorf("bridge log lacks audit %q", want)
		}
	}
	// …and the database's audit log has the same, with the refusals that
	// reached the bridge (a missing token never leaves the terminal).
	rows := handoffAudit(t, e)
	type row struct{ action, person, user, conv, reason string }
	var got []row
	for _, r := range rows {
		if r.Remote == "" || r.At.IsZero() {
			t.Errorf("audit row without address or time: %+v", r)
		}
		got = append(got, row{string(r.Action), r.Person, r.UserID, r.ConversationID, r.Reason})
	}
	want := []row{
		{"refused", "", "", "", "unknown handoff token (check BRIDGE_HANDOFF_TOKEN against config handoff.users)"},
		{"refused", "bob", "UBOB", conv, "bob (UBOB) does not take part in conversation " + conv + ": only its participants and the bot's admins may continue it"},
		{"attach", "alice", "UALICE", conv, ""},
		{"detach", "alice", "UALICE", conv, ""},
	}
	if !slices.Equal(got, want) {
		t.Errorf("audit log:\n%+v\nwant:\n%+v", got, want)
	}

	checkExportAndImport(t, e, base, conv)
}

// checkExportAndImport: `bridge export` writes the thread's session where
// a plain `claude --resume` in the chosen directory continues it; `bridge
// import` continues a local session in a new Slack thread with its
// history.
func checkExportAndImport(t *testing.T, e *slackEnv, base, conv string) {
	claude := testkit.RequireClaude(t)
	home := t.TempDir()
	project := filepath.Join(t.TempDir(), "my project")
	if err := os.MkdirAll(project, 0o755); err != nil {
		t.Fatal(err)
	}
	out, code := handoffCmd(t, aliceToken, []string{"HOME=" + home}, "export", conv, "-url", base, "-dir", project).run(t)
	m := regexp.MustCompile(`claude --resume ([0-9a-f-]{36})`).FindStringSubmatch(out)
	if code != 0 || m == nil {
		t.Fatalf("export: exit %d\n%s", code, out)
	}
	plain := func(dir string, args ...string) string {
		cmd := exec.Command(claude, args...)
		cmd.Dir = dir
		cmd.Env = append(e.model.Env(), "PATH="+os.Getenv("PATH"), "HOME="+home)
		b, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("claude %v: %v\n%s", args, err, b)
		}
		return string(b)
	}
	if got := plain(project, "-p", "[echo-history] at my desk", "--resume", m[1]); !strings.Contains(got, "hello there") || !strings.Contains(got, "fromterm.txt") {
		t.Errorf("claude --resume of the export lacks the thread's history: %q", got)
	}

	// A local session, imported into a new thread.
	local := filepath.Join(t.TempDir(), "local")
	if err := os.MkdirAll(local, 0o755); err != nil {
		t.Fatal(err)
	}
	const localID = "0b7c1f3e-2a4d-4c1e-9f00-5a6b7c8d9e0f"
	plain(local, "-p", "remember the word kiwi", "--session-id", localID)
	file := filepath.Join(home, ".claude", "projects", handoff.ProjectDirName(local), localID+".jsonl")
	out, code = handoffCmd(t, aliceToken, nil, "import", "-url", base, "-bot", "team", "-channel", slackChan, file).run(t)
	if code != 0 || !strings.Contains(out, "Imported session "+localID) {
		t.Fatalf("import: exit %d\n%s", code, out)
	}
	top, err := e.slack.WaitForPost(func(m slackfake.Message) bool {
		return m.ThreadTS == "" && strings.Contains(m.Text, "imported a Claude Code session")
	}, e2eWait)
	if err != nil {
		t.Fatalf("no post for the imported session: %v", err)
	}
	e.slack.SendMessage(slackChan, alice, "[echo-history] what was the word?", top.TS)
	e.waitThreadText(t, top.TS, "history: remember the word kiwi")
	// Importing it again is refused: it is a conversation of the bridge now.
	out, code = handoffCmd(t, aliceToken, nil, "import", "-url", base, "-bot", "team", "-channel", slackChan, file).run(t)
	if code == 0 || !strings.Contains(out, "already a conversation") {
		t.Errorf("second import: exit %d\n%s", code, out)
	}
}

// handoffAudit reads the running bridge's hand-off audit log, oldest
// first, from its SQLite database.
func handoffAudit(t *testing.T, e *slackEnv) []store.HandoffEvent {
	t.Helper()
	st, err := store.Open(t.Context(), filepath.Join(e.ab.dir, "data", "bridge.db"), nil)
	if err != nil {
		t.Fatalf("open the bridge's store: %v", err)
	}
	defer st.Close()
	rows, err := st.HandoffAudit(t.Context(), 100)
	if err != nil {
		t.Fatalf("HandoffAudit: %v", err)
	}
	slices.Reverse(rows)
	return rows
}
