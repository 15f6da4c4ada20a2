package agent

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/agentbridge/agentbridge/agent/agenttest"
	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/internal/testkit"
)

// TestSessionMinimalEnvironment: the bridge's secrets never reach the
// agent; it gets PATH, HOME, LANG, its own TMPDIR and Options.Env only.
// Checked twice: in /proc/PID/environ and from a Bash tool inside the agent.
// The TMPDIR is made in Options.TempRoot and removed after the exit.
func TestSessionMinimalEnvironment(t *testing.T) {
	t.Setenv("SLACK_BOT_TOKEN", "xoxb-bridge-secret-token")
	t.Setenv("AGENTBRIDGE_TEST_LEAK", "leaked")
	h := &harness{agenttest.NewHarness(t)}
	opts := h.opts()
	opts.Env["PROFILE_VAR"] = "from-profile"
	opts.TempRoot = t.TempDir()
	s, rec := h.start(opts)

	env := processEnviron(t, s.PID())
	for _, bad := range []string{"SLACK_BOT_TOKEN", "AGENTBRIDGE_TEST_LEAK"} {
		if _, ok := env[bad]; ok {
			t.Errorf("%s leaked into the agent environment", bad)
		}
	}
	tmp := env["TMPDIR"]
	if env["HOME"] != h.Home || env["PATH"] != os.Getenv("PATH") || env["LANG"] == "" || env["PROFILE_VAR"] != "from-profile" ||
		tmp == "" || tmp == os.Getenv("TMPDIR") {
		t.Errorf("unexpected agent environment %v", env)
	}
	if filepath.Dir(tmp) != opts.TempRoot {
		t.Errorf("agent TMPDIR %s not made in TempRoot %s", tmp, opts.TempRoot)
	}
	if st, err := os.Stat(tmp); err != nil || !st.IsDir() {
		t.Errorf("agent TMPDIR %s missing: %v", tmp, err)
	}
	allowed := map[string]bool{"PATH": true, "HOME": true, "LANG": true, "TMPDIR": true, "PROFILE_VAR": true}
	for k := range opts.Env {
		allowed[k] = true
	}
	for k := range env {
		if !allowed[k] {
			t.Errorf("unexpected variable %s in the agent environment", k)
		}
	}

	// What a tool sees (the CLI adds a few of its own variables).
	agenttest.Send(t, s, "[bash env]")
	var out string
	for done := false; !done; {
		switch e := rec.Next(t, "tool result or permission", func(ev streamjson.Event) bool {
			switch ev.(type) {
			case streamjson.ToolResult, streamjson.PermissionRequest:
				return true
			}
			return false
		}).(type) {
		case streamjson.PermissionRequest:
			agenttest.Respond(t, s, e.RequestID, streamjson.Decision{Allow: true})
		case streamjson.ToolResult:
			out, done = e.Content, true
		}
	}
	if strings.Contains(out, "xoxb-bridge-secret-token") || strings.Contains(out, "SLACK_BOT_TOKEN") || strings.Contains(out, "AGENTBRIDGE_TEST_LEAK") {
		t.Errorf("bridge secret visible to the agent's tools:\n%s", out)
	}
	if !strings.Contains(out, "PROFILE_VAR=from-profile") {
		t.Errorf("profile env missing from the tool's environment:\n%s", out)
	}
	agenttest.NextResult(t, rec)

	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(tmp); !os.IsNotExist(err) {
		t.Errorf("agent TMPDIR %s not removed after exit (stat: %v)", tmp, err)
	}
}

// TestSessionWorkdirCreated: a missing workdir is created.
func TestSessionWorkdirCreated(t *testing.T) {
	h := &harness{agenttest.NewHarness(t)}
	opts := h.opts()
	opts.Workdir = filepath.Join(h.Workdir, "deep", "er")
	s, rec := h.start(opts)
	agenttest.Send(t, s, "hi")
	if r := agenttest.NextResult(t, rec); r.Text != "pong: hi" {
		t.Errorf("result %q", r.Text)
	}
	if st, err := os.Stat(opts.Workdir); err != nil || !st.IsDir() {
		t.Errorf("workdir not created: %v", err)
	}
}

// TestSessionControlRequests: set_model and set_permission_mode are
// acknowledged; a refused one returns the CLI's error as *ControlError.
func TestSessionControlRequests(t *testing.T) {
	h := &harness{agenttest.NewHarness(t)}
	s, rec := h.start(h.opts())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	agenttest.Send(t, s, "hi")
	agenttest.NextResult(t, rec)

	if err := s.SetModel(ctx, "claude-sonnet-5-5"); err != nil {
		t.Fatalf("SetModel: %v", err)
	}
	if err := s.SetPermissionMode(ctx, "acceptEdits"); err != nil {
		t.Fatalf("SetPermissionMode: %v", err)
	}
	st := rec.Next(t, "status with the new mode", func(ev streamjson.Event) bool {
		sc, ok := ev.(streamjson.StatusChange)
		return ok && sc.PermissionMode == "acceptEdits"
	}).(streamjson.StatusChange)
	_ = st
	err := s.SetPermissionMode(ctx, "bogus")
	var ce *ControlError
	if !errors.As(err, &ce) || ce.Request != "set_permission_mode" || ce.Code != "invalid_mode" || ce.Message == "" {
		t.Errorf("bogus mode: %v", err)
	}
	err = s.SetPermissionMode(ctx, "bypassPermissions")
	if !errors.As(err, &ce) || ce.Code != "bypass_not_launched" {
		t.Errorf("bypass without launch flag: %v", err)
	}

	agenttest.Send(t, s, "after switching")
	in := rec.Next(t, "init of the next turn", func(ev streamjson.Event) bool { _, ok := ev.(streamjson.Init); return ok }).(streamjson.Init)
	if in.Model != "claude-sonnet-5-5" || in.PermissionMode != "acceptEdits" {
		t.Errorf("next turn runs with model %q mode %q", in.Model, in.PermissionMode)
	}
	agenttest.NextResult(t, rec)
	for _, ev := range rec.All() {
		if _, ok := ev.(streamjson.ControlResponse); ok {
			t.Error("a ControlResponse reached the events channel")
		}
	}
}

// TestSessionResumeUnknown: resuming an id the CLI does not know ends the
// process with an unexpected Exit carrying the CLI's complaint.
func TestSessionResumeUnknown(t *testing.T) {
	h := &harness{agenttest.NewHarness(t)}
	opts := h.opts()
	opts.Resume = true
	opts.SessionID = "00000000-0000-4000-8000-000000000000"
	s, rec := h.start(opts)
	_ = s.Send(context.Background(), streamjson.UserMessage{UUID: "u-1", Text: "hello?"}) // may race the exit
	ex := agenttest.NextExit(t, rec)
	if ex.Expected || ex.Code != 1 || ex.Reason != "crashed" || !strings.Contains(ex.StderrTail, "No conversation found") {
		t.Errorf("exit %+v", ex)
	}
}

// TestSessionCloseLeavesNoGoroutines: after Close and draining the events
// nothing of the session keeps running.
func TestSessionCloseLeavesNoGoroutines(t *testing.T) {
	h := &harness{agenttest.NewHarness(t)}
	ignore := goleak.IgnoreCurrent() // the fake model's server
	s, err := Start(context.Background(), h.opts(), testkit.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	rec := agenttest.Record(t, s)
	agenttest.Send(t, s, "hi")
	agenttest.NextResult(t, rec)
	// A permission left pending: Close answers nothing, the CLI gets EOF.
	agenttest.Send(t, s, "[bash touch pending.txt]")
	agenttest.NextPermission(t, rec)
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	rec.WaitClosed(t)
	goleak.VerifyNone(t, ignore)
}

// TestSessionCloseKillsAfterGrace: a busy agent that does not finish within
// CloseGrace is killed; the Exit is still expected.
func TestSessionCloseKillsAfterGrace(t *testing.T) {
	h := &harness{agenttest.NewHarness(t)}
	opts := h.opts()
	opts.CloseGrace = 500 * time.Millisecond
	s, rec := h.start(opts)
	agenttest.Send(t, s, "[bgbash sleep 30]")
	rec.Next(t, "task started", func(ev streamjson.Event) bool { _, ok := ev.(streamjson.TaskStarted); return ok })
	start := time.Now()
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("Close took %s", d)
	}
	ex := agenttest.NextExit(t, rec)
	if !ex.Expected || ex.Reason != "closed" {
		t.Errorf("exit %+v", ex)
	}
	// The background "sleep 30" went down with the process group.
	if err := syscall.Kill(-s.PID(), 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("process group %d still has members (kill 0: %v)", s.PID(), err)
	}
}

// processEnviron reads the environment of process pid. Right after the
// start the file can read empty: execve has switched the process to its
// new image but not yet copied the environment in (and the CLI may exec
// itself), so an empty read is retried for up to 5 s.
func processEnviron(t *testing.T, pid int) map[string]string {
	t.Helper()
	env := map[string]string{}
	testkit.WaitUntil(t, fmt.Sprintf("a non-empty environment of process %d", pid), 5*time.Second, func() bool {
		raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
		if err != nil {
			t.Fatalf("read environ: %v", err)
		}
		for _, kv := range bytes.Split(raw, []byte{0}) {
			if k, v, ok := strings.Cut(string(kv), "="); ok {
				env[k] = v
			}
		}
		return len(env) > 0
	})
	return env
}
