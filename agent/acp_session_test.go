package agent

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentbridge/agentbridge/agent/agenttest"
	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/internal/testkit"
)

// acpOpts are options for a session of the fake ACP agent bin with a
// private state dir (so it can be resumed).
func acpOpts(t *testing.T, bin string) Options {
	return Options{
		Kind: KindACP, Command: bin, Workdir: t.TempDir(), StateDir: filepath.Join(t.TempDir(), "state"),
		SessionID: uuid.NewString(), ControlTimeout: 20 * time.Second, CloseGrace: 5 * time.Second,
		Env: map[string]string{"FAKEACP_LOG": filepath.Join(t.TempDir(), "acp.log")},
	}
}

// startACP starts a session for opts and records its events; cleanup
// closes it.
func startACP(t *testing.T, opts Options) (*Session, *agenttest.Recorder) {
	t.Helper()
	s, err := Start(context.Background(), opts, testkit.Logger(t))
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	rec := agenttest.Record(t, s)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		_ = s.Close(ctx)
		rec.WaitClosed(t)
	})
	return s, rec
}

// nextOf waits for the next event of type E that pred accepts.
func nextOf[E streamjson.Event](t *testing.T, rec *agenttest.Recorder, what string, pred func(E) bool) E {
	t.Helper()
	return rec.Next(t, what, func(ev streamjson.Event) bool {
		e, ok := ev.(E)
		return ok && (pred == nil || pred(e))
	}).(E)
}

// TestACPHelloAndFollowUps: a prompt turn is an Init, the message
// receipts, streamed text, the complete text and a Result; a message sent
// while a prompt runs is queued (one prompt at a time, as the protocol
// wants) and goes as the next prompt with the history intact; !stop is
// session/cancel and ends the turn as cancelled.
func TestACPHelloAndFollowUps(t *testing.T) {
	bin := testkit.BuildFakeACP(t)
	opts := acpOpts(t, bin)
	s, rec := startACP(t, opts)
	if err := s.Initialize(context.Background()); err != nil {
		t.Fatalf("Initialize: %v", err)
	}
	hello := agenttest.Send(t, s, "hello there")
	agenttest.NextLifecycle(t, rec, hello, streamjson.LifecycleStarted)
	if d := nextOf[streamjson.TextDelta](t, rec, "first chunk", nil); d.Text != "Hello " {
		t.Errorf("first delta %q", d.Text)
	}
	r := agenttest.NextResult(t, rec)
	if r.IsError || r.Text != "Hello from fake ACP" || r.StopReason != "end_turn" || r.SessionID != opts.SessionID {
		t.Errorf("result %+v", r)
	}
	agenttest.NextLifecycle(t, rec, hello, streamjson.LifecycleCompleted)
	testkit.WaitUntil(t, "idle after the turn", agenttest.EventTimeout, func() bool { return !s.Busy() })

	slow := agenttest.Send(t, s, "slow")
	nextOf[streamjson.TextDelta](t, rec, "slow's chunk", func(d streamjson.TextDelta) bool { return d.Text == "working…" })
	follow := agenttest.Send(t, s, "follow-up")
	agenttest.NextLifecycle(t, rec, follow, streamjson.LifecycleQueued)
	if err := s.Interrupt(context.Background()); err != nil {
		t.Fatalf("Interrupt: %v", err)
	}
	r = agenttest.NextResult(t, rec)
	if !r.IsError || r.StopReason != "cancelled" {
		t.Errorf("stopped turn's result %+v", r)
	}
	agenttest.NextLifecycle(t, rec, slow, streamjson.LifecycleCompleted)
	agenttest.NextLifecycle(t, rec, follow, streamjson.LifecycleStarted)
	r = agenttest.NextResult(t, rec)
	if r.IsError || r.Text != "turn 3; history: hello there | slow | follow-up" {
		t.Errorf("follow-up's result %+v", r)
	}
	testkit.WaitUntil(t, "idle", agenttest.EventTimeout, func() bool { return !s.Busy() })
	log, _ := os.ReadFile(opts.Env["FAKEACP_LOG"])
	if !strings.Contains(string(log), `"method":"session/cancel"`) || strings.Contains(string(log), "already running") {
		t.Errorf("agent's input:\n%s", log)
	}
	var ce *ControlError
	if err := s.SetModel(context.Background(), "x"); !errors.As(err, &ce) || !strings.Contains(err.Error(), "not one of the agent's choices") {
		t.Errorf("SetModel of a model the agent does not offer: %v, want a clear refusal", err)
	}
}

// TestACPPermissions: session/request_permission is a PermissionRequest
// for Bash with the command (the Bash analyzer's input) and an "always"
// suggestion; Allow, Always and Deny pick the agent's matching options;
// a stop withdraws a pending request; answering it afterwards is
// ErrNotPending.
func TestACPPermissions(t *testing.T) {
	bin := testkit.BuildFakeACP(t)
	s, rec := startACP(t, acpOpts(t, bin))
	for _, tc := range []struct {
		d    streamjson.Decision
		want string
	}{
		{streamjson.Decision{Allow: true}, "ran (completed, option yes): hi"},
		{streamjson.Decision{Allow: true, UpdatedPermissions: []json.RawMessage{json.RawMessage(`{}`)}}, "ran (completed, option always): hi"},
		{streamjson.Decision{Message: "no"}, "denied"},
	} {
		agenttest.Send(t, s, "run: echo hi")
		u := nextOf[streamjson.ToolUse](t, rec, "the tool call", nil)
		p := agenttest.NextPermission(t, rec)
		if p.ToolName != "Bash" || string(p.Input) != `{"command":"echo hi","description":"Run echo hi"}` || len(p.Suggestions) != 1 || p.ToolUseID != u.ID || u.Name != "Bash" {
			t.Fatalf("tool use %+v permission %+v", u, p)
		}
		agenttest.Respond(t, s, p.RequestID, tc.d)
		res := nextOf[streamjson.ToolResult](t, rec, "the tool's result", nil)
		if r := agenttest.NextResult(t, rec); r.Text != tc.want || res.IsError != !tc.d.Allow {
			t.Errorf("decision %+v: result %q, tool result %+v; want %q", tc.d, r.Text, res, tc.want)
		}
	}
	agenttest.Send(t, s, "run: echo late")
	p := agenttest.NextPermission(t, rec)
	if err := s.Interrupt(context.Background()); err != nil {
		t.Fatal(err)
	}
	nextOf[streamjson.PermissionCancelled](t, rec, "the request withdrawn", func(c streamjson.PermissionCancelled) bool { return c.RequestID == p.RequestID })
	if r := agenttest.NextResult(t, rec); !r.IsError || r.StopReason != "cancelled" {
		t.Errorf("stopped turn %+v", r)
	}
	if err := s.Respond(context.Background(), p.RequestID, streamjson.Decision{Allow: true}); !errors.Is(err, ErrNotPending) {
		t.Errorf("answer after the stop: %v, want ErrNotPending", err)
	}
	testkit.WaitUntil(t, "idle", agenttest.EventTimeout, func() bool { return !s.Busy() })
}

// TestACPPermissionAfterCancel: a permission request that arrives after
// session/cancel is refused at once ("cancelled"), with a notice; no card
// is opened and nothing waits.
func TestACPPermissionAfterCancel(t *testing.T) {
	bin := testkit.BuildFakeACP(t)
	s, rec := startACP(t, acpOpts(t, bin))
	agenttest.Send(t, s, "late-permission")
	nextOf[streamjson.Init](t, rec, "the turn", nil)
	if err := s.Interrupt(context.Background()); err != nil {
		t.Fatal(err)
	}
	n := nextOf[streamjson.Notice](t, rec, "the notice", nil)
	if !strings.Contains(n.Text, "after the turn was stopped") || n.Level != "warning" {
		t.Errorf("notice %+v", n)
	}
	r := agenttest.NextResult(t, rec)
	if !r.IsError || !strings.Contains(r.Text, `"outcome":"cancelled"`) {
		t.Errorf("result %+v", r)
	}
	for _, ev := range rec.All() {
		if _, ok := ev.(streamjson.PermissionRequest); ok {
			t.Errorf("a permission request reached the host after the stop: %+v", ev)
		}
	}
	testkit.WaitUntil(t, "idle", agenttest.EventTimeout, func() bool { return !s.Busy() && len(s.PendingPermissions()) == 0 })
}

// TestACPAgentDies: an agent that exits in a turn is an unexpected Exit
// with its stderr, and the session is no longer busy.
func TestACPAgentDies(t *testing.T) {
	bin := testkit.BuildFakeACP(t)
	s, rec := startACP(t, acpOpts(t, bin))
	id := agenttest.Send(t, s, "die")
	agenttest.NextLifecycle(t, rec, id, streamjson.LifecycleStarted)
	ex := agenttest.NextExit(t, rec)
	if ex.Expected || ex.Code != 3 || ex.Reason != "crashed" || !strings.Contains(ex.StderrTail, "dying as asked") {
		t.Errorf("exit %+v", ex)
	}
	if s.Busy() || s.Alive() {
		t.Errorf("busy %v alive %v after the exit", s.Busy(), s.Alive())
	}
	if err := s.Send(context.Background(), streamjson.UserMessage{Text: "x"}); !errors.Is(err, ErrClosed) {
		t.Errorf("Send after the exit: %v", err)
	}
}

// TestACPMalformedAndUnknown: lines that are not JSON-RPC are
// DecodeErrors with one notice, unknown notifications and update kinds
// are Unknown, and a request the bridge does not serve (fs/*) gets a
// JSON-RPC error at once: the turn completes.
func TestACPMalformedAndUnknown(t *testing.T) {
	bin := testkit.BuildFakeACP(t)
	s, rec := startACP(t, acpOpts(t, bin))
	agenttest.Send(t, s, "garbage")
	r := agenttest.NextResult(t, rec)
	if r.IsError || !strings.Contains(r.Text, "-32601") || !strings.Contains(r.Text, "fs/read_text_file") {
		t.Errorf("result %+v", r)
	}
	var decodeErrs, notices int
	unknown := map[string]bool{}
	for _, ev := range rec.All() {
		switch e := ev.(type) {
		case streamjson.DecodeError:
			decodeErrs++
		case streamjson.Notice:
			notices++
			if !strings.Contains(e.Text, "not JSON-RPC") {
				t.Errorf("notice %+v", e)
			}
		case streamjson.Unknown:
			unknown[e.Subtype] = true
		}
	}
	if decodeErrs != 2 || notices != 1 || !unknown["x/unknown_notification"] || !unknown["future_kind_of_update"] {
		t.Errorf("decode errors %d, notices %d, unknown %v", decodeErrs, notices, unknown)
	}
	testkit.WaitUntil(t, "idle", agenttest.EventTimeout, func() bool { return !s.Busy() })
}

// TestACPResume: a session started again with Resume loads the agent's
// session (session/load) without replaying its history as news — also
// when the agent replays it after answering — and the conversation goes
// on; an agent without loadSession starts fresh with a notice saying so.
func TestACPResume(t *testing.T) {
	bin := testkit.BuildFakeACP(t)
	opts := acpOpts(t, bin)
	s, rec := startACP(t, opts)
	agenttest.Send(t, s, "one")
	agenttest.NextResult(t, rec)
	agenttest.Send(t, s, "two")
	agenttest.NextResult(t, rec)
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	rec.WaitClosed(t)

	opts.Resume = true
	s2, rec2 := startACP(t, opts)
	agenttest.Send(t, s2, "three")
	if r := agenttest.NextResult(t, rec2); r.Text != "turn 3; history: one | two | three" {
		t.Errorf("resumed result %+v", r)
	}
	for _, ev := range rec2.All() {
		if d, ok := ev.(streamjson.TextDelta); ok && strings.Contains(d.Text, "turn 1") {
			t.Errorf("the loaded history was replayed as news: %+v", d)
		}
	}
	if err := s2.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	rec2.WaitClosed(t)

	// An agent that replays the history after answering session/load (as
	// Gemini CLI does): the replay is not taken for the next answer.
	opts.Env["FAKEACP_LATE_REPLAY"] = "1"
	s3, rec3 := startACP(t, opts)
	agenttest.Send(t, s3, "four")
	if r := agenttest.NextResult(t, rec3); r.Text != "turn 4; history: one | two | three | four" {
		t.Errorf("result after a late replay %+v", r)
	}
	for _, ev := range rec3.All() {
		if d, ok := ev.(streamjson.TextDelta); ok && strings.Contains(d.Text, "turn 1") {
			t.Errorf("the late replay was shown as news: %+v", d)
		}
	}
	if err := s3.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	rec3.WaitClosed(t)
	delete(opts.Env, "FAKEACP_LATE_REPLAY")

	opts.Env["FAKEACP_NO_LOAD"] = "1"
	s4, rec4 := startACP(t, opts)
	n := nextOf[streamjson.Notice](t, rec4, "the notice", nil)
	if !strings.Contains(n.Text, "cannot resume") {
		t.Errorf("notice %+v", n)
	}
	agenttest.Send(t, s4, "five")
	if r := agenttest.NextResult(t, rec4); r.Text != "turn 1; history: five" {
		t.Errorf("fresh result %+v", r)
	}
}

// TestACPPlan: a plan update is shown as Claude Code's to-do list is: a
// TodoWrite call with the entries.
func TestACPPlan(t *testing.T) {
	bin := testkit.BuildFakeACP(t)
	s, rec := startACP(t, acpOpts(t, bin))
	agenttest.Send(t, s, "plan")
	u := nextOf[streamjson.ToolUse](t, rec, "the plan", nil)
	if u.Name != "TodoWrite" || !strings.Contains(string(u.Input), `"content":"write the answer","status":"in_progress"`) {
		t.Errorf("plan %+v: %s", u, u.Input)
	}
	if r := agenttest.NextResult(t, rec); r.Text != "planned" {
		t.Errorf("result %+v", r)
	}
}
