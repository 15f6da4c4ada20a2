package agent

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/agent/agenttest"
	"github.com/agentbridge/agentbridge/agent/fakemodel"
	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/internal/testkit"
)

// TestSessionHelloAndFollowUp: a message gets its receipts and a result; a
// follow-up runs on the same process; the session is idle in between.
func TestSessionHelloAndFollowUp(t *testing.T) {
	h := &harness{agenttest.NewHarness(t)}
	opts := h.opts()
	s, rec := h.start(opts)
	if s.SessionID() != opts.SessionID || s.PID() <= 0 || !s.Alive() {
		t.Fatalf("SessionID %q PID %d Alive %v", s.SessionID(), s.PID(), s.Alive())
	}
	before := s.LastActive()

	id := agenttest.Send(t, s, "hello")
	if !s.Busy() {
		t.Error("not Busy right after Send")
	}
	agenttest.NextLifecycle(t, rec, id, streamjson.LifecycleQueued)
	in := rec.Next(t, "Init", func(ev streamjson.Event) bool { _, ok := ev.(streamjson.Init); return ok }).(streamjson.Init)
	if in.SessionID != opts.SessionID || in.CWD != opts.Workdir {
		t.Errorf("Init session %q cwd %q, want %q %q", in.SessionID, in.CWD, opts.SessionID, opts.Workdir)
	}
	r := agenttest.NextResult(t, rec)
	if r.IsError || r.Text != "pong: hello" || r.SessionID != opts.SessionID || r.Origin != "" {
		t.Fatalf("result %+v", r)
	}
	agenttest.NextLifecycle(t, rec, id, streamjson.LifecycleCompleted)
	testkit.WaitUntil(t, "idle after the result", 5*time.Second, func() bool { return !s.Busy() })
	if !s.LastActive().After(before) {
		t.Error("LastActive did not advance")
	}
	pid := s.PID()

	id2 := agenttest.Send(t, s, "second message")
	r2 := agenttest.NextResult(t, rec)
	if r2.Text != "pong: second message" {
		t.Errorf("follow-up result %q", r2.Text)
	}
	agenttest.NextLifecycle(t, rec, id2, streamjson.LifecycleCompleted)
	if s.PID() != pid || !s.Alive() {
		t.Errorf("follow-up changed process: pid %d → %d, alive %v", pid, s.PID(), s.Alive())
	}
	var deltas strings.Builder
	for _, ev := range rec.All() {
		if d, ok := ev.(streamjson.TextDelta); ok {
			deltas.WriteString(d.Text)
		}
	}
	if !strings.Contains(deltas.String(), "pong: hello") {
		t.Errorf("streamed deltas %q lack the first answer", deltas.String())
	}

	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	ex := agenttest.NextExit(t, rec)
	if !ex.Expected || ex.Reason != "closed" || ex.Code != 0 {
		t.Errorf("exit %+v", ex)
	}
	rec.WaitClosed(t)
	if s.Alive() || s.Busy() {
		t.Error("Alive or Busy after Close")
	}
	if err := s.Send(context.Background(), streamjson.UserMessage{UUID: "x", Text: "late"}); !errors.Is(err, ErrClosed) {
		t.Errorf("Send after Close: %v, want ErrClosed", err)
	}
}

// TestSessionMessageMidTurn: a message sent while a slow answer streams is
// delivered (receipts) and answered in its own turn.
func TestSessionMessageMidTurn(t *testing.T) {
	h := &harness{agenttest.NewHarness(t)}
	s, rec := h.start(h.opts())
	first := agenttest.Send(t, s, "[slow 20] first")
	rec.Next(t, "a text delta", func(ev streamjson.Event) bool { _, ok := ev.(streamjson.TextDelta); return ok })
	second := agenttest.Send(t, s, "second while busy")
	agenttest.NextLifecycle(t, rec, second, streamjson.LifecycleQueued)

	r1 := agenttest.NextResult(t, rec)
	r2 := agenttest.NextResult(t, rec)
	if !strings.HasPrefix(r1.Text, "pong: [slow 20] first") || r2.Text != "pong: second while busy" {
		t.Errorf("results %q / %q", r1.Text, r2.Text)
	}
	for _, id := range []string{first, second} {
		found := map[string]bool{}
		for _, ev := range rec.All() {
			if l, ok := ev.(streamjson.Lifecycle); ok && l.UUID == id {
				found[l.State] = true
			}
		}
		if !found[streamjson.LifecycleQueued] || !found[streamjson.LifecycleStarted] {
			t.Errorf("message %s receipts %v", id, found)
		}
	}
	agenttest.NextLifecycle(t, rec, second, streamjson.LifecycleCompleted)
}

// TestSessionPermissionAllow: the tool runs after an allow with the
// original input.
func TestSessionPermissionAllow(t *testing.T) {
	h := &harness{agenttest.NewHarness(t)}
	s, rec := h.start(h.opts())
	agenttest.Send(t, s, "[bash touch ran.txt && echo hello]")
	p := agenttest.NextPermission(t, rec)
	if p.ToolName != "Bash" || !strings.Contains(string(p.Input), "touch ran.txt") {
		t.Fatalf("permission %+v", p)
	}
	if got := s.PendingPermissions(); len(got) != 1 || got[0] != p.RequestID {
		t.Errorf("PendingPermissions %v", got)
	}
	if !s.Busy() {
		t.Error("not Busy with a pending permission")
	}
	agenttest.Respond(t, s, p.RequestID, streamjson.Decision{Allow: true})
	tr := rec.Next(t, "tool result", func(ev streamjson.Event) bool { _, ok := ev.(streamjson.ToolResult); return ok }).(streamjson.ToolResult)
	if tr.IsError || tr.Content != "hello" {
		t.Errorf("tool result %+v", tr)
	}
	r := agenttest.NextResult(t, rec)
	if r.IsError || r.Text != "tool said: hello" {
		t.Errorf("result %+v", r)
	}
	if _, err := os.Stat(filepath.Join(h.Workdir, "ran.txt")); err != nil {
		t.Errorf("tool did not run: %v", err)
	}
	if err := s.Respond(context.Background(), p.RequestID, streamjson.Decision{Allow: true}); !errors.Is(err, ErrNotPending) {
		t.Errorf("second answer: %v, want ErrNotPending", err)
	}
}

// TestSessionPermissionDeny: the tool is refused with the host's message
// and the turn goes on to a result.
func TestSessionPermissionDeny(t *testing.T) {
	h := &harness{agenttest.NewHarness(t)}
	s, rec := h.start(h.opts())
	agenttest.Send(t, s, "[bash touch denied.txt && echo hello]")
	p := agenttest.NextPermission(t, rec)
	agenttest.Respond(t, s, p.RequestID, streamjson.Decision{Message: "Denied by @alice"})
	tr := rec.Next(t, "tool result", func(ev streamjson.Event) bool { _, ok := ev.(streamjson.ToolResult); return ok }).(streamjson.ToolResult)
	if !tr.IsError || !strings.Contains(tr.Content, "Denied by @alice") {
		t.Errorf("tool result %+v", tr)
	}
	r := agenttest.NextResult(t, rec)
	if r.IsError || !strings.Contains(r.Text, "Denied by @alice") {
		t.Errorf("result %+v", r)
	}
	if _, err := os.Stat(filepath.Join(h.Workdir, "denied.txt")); !os.IsNotExist(err) {
		t.Errorf("denied tool ran anyway (stat err %v)", err)
	}
}

// TestSessionAlwaysAllow: allowing with the CLI's own addRules suggestion
// makes the identical second call run without asking.
func TestSessionAlwaysAllow(t *testing.T) {
	h := &harness{agenttest.NewHarness(t)}
	s, rec := h.start(h.opts())
	const prompt = "[bash touch always.txt]"
	agenttest.Send(t, s, prompt)
	p := agenttest.NextPermission(t, rec)
	var rules []json.RawMessage
	for _, sug := range p.Suggestions {
		var k struct{ Type string }
		if json.Unmarshal(sug, &k) == nil && k.Type == "addRules" {
			rules = append(rules, sug)
		}
	}
	if len(rules) == 0 {
		t.Fatalf("no addRules suggestion in %s", p.Raw)
	}
	agenttest.Respond(t, s, p.RequestID, streamjson.Decision{Allow: true, UpdatedPermissions: rules})
	agenttest.NextResult(t, rec)
	if err := os.Remove(filepath.Join(h.Workdir, "always.txt")); err != nil {
		t.Fatalf("first call did not run: %v", err)
	}

	agenttest.Send(t, s, prompt)
	r := agenttest.NextResult(t, rec)
	if r.Text != "tool said: (Bash completed with no output)" {
		t.Errorf("second result %q", r.Text)
	}
	for _, ev := range rec.All() {
		if q, ok := ev.(streamjson.PermissionRequest); ok && q.RequestID != p.RequestID {
			t.Errorf("second identical call asked again: %s", q.Input)
		}
	}
	if _, err := os.Stat(filepath.Join(h.Workdir, "always.txt")); err != nil {
		t.Errorf("second call did not run: %v", err)
	}
}

// TestSessionAskUserQuestion: the answer travels in updatedInput.answers
// and reaches the model.
func TestSessionAskUserQuestion(t *testing.T) {
	h := &harness{agenttest.NewHarness(t)}
	s, rec := h.start(h.opts())
	agenttest.Send(t, s, "[ask Which database should we use? | Postgres | SQLite]")
	p := agenttest.NextPermission(t, rec)
	if p.ToolName != "AskUserQuestion" || !p.RequiresUserInteraction {
		t.Fatalf("permission %+v", p)
	}
	var input map[string]any
	if err := json.Unmarshal(p.Input, &input); err != nil {
		t.Fatal(err)
	}
	input["answers"] = map[string]string{"Which database should we use?": "SQLite"}
	updated, _ := json.Marshal(input)
	agenttest.Respond(t, s, p.RequestID, streamjson.Decision{Allow: true, UpdatedInput: updated})
	r := agenttest.NextResult(t, rec)
	if !strings.Contains(r.Text, "answer was:") || !strings.Contains(r.Text, "SQLite") {
		t.Errorf("result %q does not carry the answer", r.Text)
	}
}

// TestSessionInterrupt: an interrupt ends a streaming turn with an error
// result; the process stays usable.
func TestSessionInterrupt(t *testing.T) {
	h := &harness{agenttest.NewHarness(t)}
	s, rec := h.start(h.opts())
	agenttest.Send(t, s, "[slow 100] never finishes")
	rec.Next(t, "a text delta", func(ev streamjson.Event) bool { _, ok := ev.(streamjson.TextDelta); return ok })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := s.Interrupt(ctx); err != nil {
		t.Fatalf("Interrupt: %v", err)
	}
	r := agenttest.NextResult(t, rec)
	if !r.IsError || strings.HasPrefix(r.Text, "pong") {
		t.Errorf("interrupted result %+v", r)
	}
	agenttest.Send(t, s, "after interrupt")
	if r := agenttest.NextResult(t, rec); r.Text != "pong: after interrupt" {
		t.Errorf("result after interrupt %q", r.Text)
	}
}

// TestSessionBackgroundTask: the turn's result comes first; the task's
// notification and a CLI-initiated result follow; Busy covers the task.
func TestSessionBackgroundTask(t *testing.T) {
	h := &harness{agenttest.NewHarness(t)}
	s, rec := h.start(h.opts())
	agenttest.Send(t, s, "[bgbash sleep 2; echo done]")
	var first streamjson.Result
	for got := false; !got; {
		switch e := rec.Next(t, "permission or result", func(ev streamjson.Event) bool {
			switch ev.(type) {
			case streamjson.PermissionRequest, streamjson.Result:
				return true
			}
			return false
		}).(type) {
		case streamjson.PermissionRequest:
			agenttest.Respond(t, s, e.RequestID, streamjson.Decision{Allow: true})
		case streamjson.Result:
			first, got = e, true
		}
	}
	if first.Origin != "" || first.IsError {
		t.Errorf("first result %+v", first)
	}
	var started *streamjson.TaskStarted
	for _, ev := range rec.All() {
		if ts, ok := ev.(streamjson.TaskStarted); ok {
			started = &ts
		}
	}
	if started == nil || !started.Background || started.TaskType != "local_bash" {
		t.Fatalf("no background TaskStarted before the first result: %+v", started)
	}
	if !s.Busy() {
		t.Error("not Busy while the background task runs")
	}
	n := rec.Next(t, "task notification", func(ev streamjson.Event) bool { _, ok := ev.(streamjson.TaskNotification); return ok }).(streamjson.TaskNotification)
	if n.TaskID != started.TaskID || n.Status != "completed" {
		t.Errorf("notification %+v", n)
	}
	second := agenttest.NextResult(t, rec)
	if second.Origin != "task-notification" || second.IsError {
		t.Errorf("CLI-initiated result %+v", second)
	}
	testkit.WaitUntil(t, "idle after the task", 10*time.Second, func() bool { return !s.Busy() })
}

// TestSessionKillAndResume: a SIGKILL mid-turn is an unexpected Exit; a
// session resumed with the same id sees the earlier conversation.
func TestSessionKillAndResume(t *testing.T) {
	h := &harness{agenttest.NewHarness(t)}
	opts := h.opts()
	s, rec := h.start(opts)
	agenttest.Send(t, s, "remember the word alpha")
	if r := agenttest.NextResult(t, rec); r.Text != "pong: remember the word alpha" {
		t.Fatalf("result %q", r.Text)
	}
	agenttest.Send(t, s, "[slow 100] interrupted by a kill")
	rec.Next(t, "a text delta", func(ev streamjson.Event) bool { _, ok := ev.(streamjson.TextDelta); return ok })
	if err := syscall.Kill(s.PID(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	ex := agenttest.NextExit(t, rec)
	if ex.Expected || ex.Reason != "crashed" || ex.Code != -1 || ex.Err == nil {
		t.Errorf("exit %+v", ex)
	}
	rec.WaitClosed(t)
	if s.Alive() {
		t.Error("Alive after kill")
	}

	opts.Resume = true
	s2, rec2 := h.start(opts)
	agenttest.Send(t, s2, "[echo-history]")
	r := agenttest.NextResult(t, rec2)
	if !strings.Contains(r.Text, "remember the word alpha") {
		t.Errorf("resumed session does not see the history: %q", r.Text)
	}
	reqs := h.Model.MessagesRequests()
	last := reqs[len(reqs)-1]
	if texts := strings.Join(fakemodel.UserTexts(last), "|"); !strings.Contains(texts, "remember the word alpha") {
		t.Errorf("last model request lacks the earlier message: %q", texts)
	}
}

// TestSessionImageMessage: a message with an image block is accepted by
// the CLI and reaches the model as an image.
func TestSessionImageMessage(t *testing.T) {
	h := &harness{agenttest.NewHarness(t)}
	s, rec := h.start(h.opts())
	// A 1x1 PNG, as in the img1 capture.
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89" +
		"\x00\x00\x00\rIDATx\xdac\xfc\xcf\xc0P\x0f\x00\x04\x85\x01\x80\x84\xa9\x8c!\x00\x00\x00\x00IEND\xaeB`\x82")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Send(ctx, streamjson.UserMessage{UUID: "img-1", Text: "what is in this image?", Images: []streamjson.Image{{MediaType: "image/png", Data: png}}}); err != nil {
		t.Fatal(err)
	}
	if r := agenttest.NextResult(t, rec); r.IsError {
		t.Errorf("result %q is an error", r.Text)
	}
	reqs := h.Model.MessagesRequests()
	if texts := strings.Join(fakemodel.UserTexts(reqs[len(reqs)-1]), "|"); !strings.Contains(texts, "what is in this image?") {
		t.Errorf("the model request lacks the text: %q", texts)
	}
	found := false
	for _, m := range reqs[len(reqs)-1].Messages {
		for _, b := range m.Blocks {
			if b.Type == "image" {
				found = true
			}
		}
	}
	if !found {
		t.Error("the model request carries no image block")
	}
}
