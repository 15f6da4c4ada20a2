package demomodel_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentbridge/agentbridge/agent"
	"github.com/agentbridge/agentbridge/agent/demomodel"
	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/internal/testkit"
)

// eventTimeout bounds each wait for the CLI; it starts in about a second
// on a loaded machine.
const eventTimeout = 60 * time.Second

// TestDemoWithRealCLI drives the real Claude Code CLI through the demo's
// three scripted flows in one session, as the bridge would: a streamed
// introduction, a Bash permission that shows the command's output once
// allowed, and a question whose answer comes back as updatedInput.answers.
func TestDemoWithRealCLI(t *testing.T) {
	testkit.RequireClaude(t)
	srv, err := demomodel.Start(slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 3*eventTimeout)
	defer cancel()
	s, err := agent.Start(ctx, agent.Options{
		Workdir: t.TempDir(), Home: t.TempDir(), Env: demomodel.AgentEnv(srv),
		SessionID: uuid.NewString(), ControlTimeout: 20 * time.Second, CloseGrace: 20 * time.Second,
	}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatalf("start the CLI: %v", err)
	}
	defer func() {
		cctx, ccancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer ccancel()
		_ = s.Close(cctx)
		for range s.Events() { // drain until the session closes the channel
		}
	}()

	send := func(text string) {
		t.Helper()
		if err := s.Send(ctx, streamjson.UserMessage{UUID: uuid.NewString(), Text: text}); err != nil {
			t.Fatalf("send %q: %v", text, err)
		}
	}
	// next returns the first event of type E, counting the text deltas on the way.
	deltas := 0
	next := func(what string, match func(streamjson.Event) bool) streamjson.Event {
		t.Helper()
		timer := time.NewTimer(eventTimeout)
		defer timer.Stop()
		for {
			select {
			case ev, ok := <-s.Events():
				if !ok {
					t.Fatalf("the CLI exited while waiting for %s", what)
				}
				if _, ok := ev.(streamjson.TextDelta); ok {
					deltas++
				}
				if match(ev) {
					return ev
				}
			case <-timer.C:
				t.Fatalf("no %s within %v", what, eventTimeout)
			}
		}
	}
	result := func() streamjson.Result {
		t.Helper()
		r := next("result", func(ev streamjson.Event) bool { _, ok := ev.(streamjson.Result); return ok }).(streamjson.Result)
		if r.IsError {
			t.Fatalf("turn failed: %s %v", r.Text, r.Errors)
		}
		return r
	}
	permission := func(tool string) streamjson.PermissionRequest {
		t.Helper()
		return next(tool+" permission", func(ev streamjson.Event) bool {
			p, ok := ev.(streamjson.PermissionRequest)
			return ok && p.ToolName == tool
		}).(streamjson.PermissionRequest)
	}

	send("hi there")
	if r := result(); !strings.Contains(r.Text, "demo mode") || deltas < 10 {
		t.Errorf("introduction in %d deltas: %q", deltas, r.Text)
	}

	send("run a command")
	p := permission("Bash")
	var bash struct{ Command string }
	if err := json.Unmarshal(p.Input, &bash); err != nil || bash.Command != demomodel.DemoCommand {
		t.Errorf("Bash input %s (%v), want the demo command", p.Input, err)
	}
	if err := s.Respond(ctx, p.RequestID, streamjson.Decision{Allow: true}); err != nil {
		t.Fatal(err)
	}
	if r := result(); !regexp.MustCompile("(?s)ran in my sandbox.*```text\n-rw.* hello.txt\n```").MatchString(r.Text) {
		t.Errorf("after the command: %q", r.Text)
	}

	send("ask me a question")
	p = permission("AskUserQuestion")
	var in map[string]any
	if err := json.Unmarshal(p.Input, &in); err != nil {
		t.Fatal(err)
	}
	in["answers"] = map[string]string{demomodel.Question: "Slack"}
	updated, _ := json.Marshal(in)
	if err := s.Respond(ctx, p.RequestID, streamjson.Decision{Allow: true, UpdatedInput: updated}); err != nil {
		t.Fatal(err)
	}
	if r := result(); !strings.Contains(r.Text, "You chose **Slack**") || !strings.Contains(r.Text, "SLACK_APP_TOKEN") {
		t.Errorf("after the answer: %q", r.Text)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("the demo model kept %d requests, want none", n)
	}
}
