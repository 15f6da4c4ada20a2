package fakemodel

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// These tests drive the real Claude Code CLI against the fake. They skip
// when `claude` is not on PATH (and fail instead under CI).

// turnTimeout is generous: the CLI is slow to start on a loaded machine.
const turnTimeout = 60 * time.Second

func TestCLIHello(t *testing.T) {
	srv := New(t)
	p := startCLI(t, srv, cliOptions{})
	p.sendUser("hello")
	res := p.waitResult(turnTimeout)
	if res.str("result") != "pong: hello" || res.M["is_error"] != false {
		t.Fatalf("result %s", res.Raw)
	}
	if cost, _ := res.M["total_cost_usd"].(float64); cost <= 0 {
		t.Errorf("total_cost_usd %v, want > 0 (usage must be reported)", res.M["total_cost_usd"])
	}
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("CLI made %d requests, want exactly 1: %v", len(reqs), paths(reqs))
	}
	r := reqs[0]
	if r.Method != "POST" || r.Path != "/v1/messages" || r.RawQuery != "beta=true" || !r.Stream || len(r.Tools) == 0 || LastUserText(r) != "hello" {
		t.Errorf("request %s %s?%s stream=%v tools=%d text=%q", r.Method, r.Path, r.RawQuery, r.Stream, len(r.Tools), LastUserText(r))
	}
}

func TestCLIBashPermission(t *testing.T) {
	srv := New(t)
	p := startCLI(t, srv, cliOptions{})
	p.sendUser("[bash touch x]")
	req := p.waitFor(turnTimeout, "can_use_tool", func(m cliMsg) bool { return m.Type == "control_request" })
	if req.str("request.subtype") != "can_use_tool" || req.str("request.tool_name") != "Bash" ||
		req.str("request.input.command") != "touch x" || !strings.HasPrefix(req.str("request.tool_use_id"), "toolu_fake_") {
		t.Fatalf("control request %s", req.Raw)
	}
	p.allow(req)
	res := p.waitResult(turnTimeout)
	if !strings.Contains(res.str("result"), "tool said") || res.M["is_error"] != false {
		t.Fatalf("result %s", res.Raw)
	}
	if _, err := os.Stat(filepath.Join(p.Workdir, "x")); err != nil {
		t.Errorf("the command did not run: %v", err)
	}
	if got := scripts(srv.Requests()); got != "bash,tool-result" {
		t.Errorf("scripts %s", got)
	}
}

func TestCLIAPIError(t *testing.T) {
	srv := New(t)
	p := startCLI(t, srv, cliOptions{})
	p.sendUser("[error 500]")
	// With CLAUDE_CODE_MAX_RETRIES=0 the error ends the turn at once: no
	// system/api_retry lines (each would mean a backoff of seconds to minutes).
	res := p.waitFor(turnTimeout, "result", func(m cliMsg) bool {
		if m.Type == "system" && m.Sub == "api_retry" {
			t.Errorf("CLI retried: %s", m.Raw)
		}
		return m.Type == "result"
	})
	if res.M["is_error"] != true || !strings.Contains(res.str("result"), "500") || res.str("terminal_reason") != "api_error" {
		t.Fatalf("result %s", res.Raw)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d requests, want 1 (no retries)", n)
	}
	// The process stays usable, and the failed prompt is merged into the next one.
	p.sendUser("again")
	if res := p.waitResult(turnTimeout); res.str("result") != "pong: again" {
		t.Errorf("after the error: %s", res.Raw)
	}
}

func TestCLIEchoHistory(t *testing.T) {
	srv := New(t)
	p := startCLI(t, srv, cliOptions{})
	for _, text := range []string{"first", "second"} {
		p.sendUser(text)
		if res := p.waitResult(turnTimeout); res.str("result") != "pong: "+text {
			t.Fatalf("result %s", res.Raw)
		}
	}
	p.sendUser("[echo-history]")
	if res := p.waitResult(turnTimeout); res.str("result") != "history: first | second" {
		t.Fatalf("result %s", res.Raw)
	}
}

// TestCLIResume checks the history a resumed session sends to the model.
func TestCLIResume(t *testing.T) {
	srv := New(t)
	p := startCLI(t, srv, cliOptions{})
	p.sendUser("remember me")
	p.waitResult(turnTimeout)
	_ = p.stdin.Close()
	<-p.done

	q := startCLI(t, srv, cliOptions{Home: p.Home, Workdir: p.Workdir, Args: []string{"--resume", p.SessionID}})
	q.sendUser("[echo-history]")
	if res := q.waitResult(turnTimeout); res.str("result") != "history: remember me" || res.str("session_id") != p.SessionID {
		t.Fatalf("result %s", res.Raw)
	}
}

// TestCLISlowInterrupt interrupts a [slow N] stream mid-way.
func TestCLISlowInterrupt(t *testing.T) {
	srv := New(t)
	p := startCLI(t, srv, cliOptions{})
	p.sendUser("[slow 200] take your time") // 20s of streaming unless cut
	p.waitFor(turnTimeout, "first text delta", func(m cliMsg) bool {
		return m.Type == "stream_event" && m.str("event.delta.type") == "text_delta"
	})
	start := time.Now()
	p.send(map[string]any{"type": "control_request", "request_id": "host-1", "request": map[string]any{"subtype": "interrupt"}})
	res := p.waitResult(turnTimeout)
	if d := time.Since(start); d > 15*time.Second {
		t.Errorf("interrupt took %v; the 200-chunk stream should have been cut", d)
	}
	if strings.HasPrefix(res.str("result"), "pong: [slow 200] take your time") {
		t.Errorf("the full reply arrived despite the interrupt: %s", res.Raw)
	}
	if r, err := srv.WaitForRequest(testCtx(t), func(r Request) bool { return r.Status != 0 }); err != nil || r.Script != "pong (cut)" {
		t.Errorf("request outcome %q, %v", r.Script, err)
	}
}

// TestCLIScripts runs the interactive scripts one after another on one CLI.
func TestCLIScripts(t *testing.T) {
	srv := New(t)
	p := startCLI(t, srv, cliOptions{})
	if err := os.WriteFile(filepath.Join(p.Workdir, "pre.txt"), []byte("alpha beta\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		prompt   string
		tool     string // expected permission request ("" = none)
		answers  map[string]any
		want     string // result prefix
		fileName string // file to check afterwards
		fileWant string
	}{
		{prompt: "[write notes.txt hello world]", tool: "Write", want: "tool said: File created successfully", fileName: "notes.txt", fileWant: "hello world"},
		{prompt: "[edit pre.txt alpha gamma]", tool: "Edit", want: "tool said: The file", fileName: "pre.txt", fileWant: "gamma beta\n"},
		{prompt: "[ask Which db? | Postgres | MySQL]", tool: "AskUserQuestion", answers: map[string]any{"Which db?": "Postgres"}, want: `answer was: Your questions have been answered: "Which db?"="Postgres"`},
		{prompt: "[askmulti Which? | A | B | C]", tool: "AskUserQuestion", answers: map[string]any{"Which?": "A, C"}, want: `answer was: Your questions have been answered: "Which?"="A, C"`},
		{prompt: "[long 5000]", want: "Paragraph 1."},
	}
	for _, tc := range tests {
		t.Run(tc.prompt, func(t *testing.T) {
			p.sendUser(tc.prompt)
			if tc.tool != "" {
				req := p.waitFor(turnTimeout, "can_use_tool", func(m cliMsg) bool { return m.Type == "control_request" })
				if req.str("request.tool_name") != tc.tool {
					t.Fatalf("permission request %s", req.Raw)
				}
				if tc.answers != nil {
					in := req.M["request"].(map[string]any)["input"].(map[string]any)
					in["answers"] = tc.answers
				}
				p.allow(req)
			}
			res := p.waitResult(turnTimeout)
			if !strings.HasPrefix(res.str("result"), tc.want) {
				t.Fatalf("result %.300s\nwant prefix %q", res.str("result"), tc.want)
			}
			if tc.fileName != "" {
				got, err := os.ReadFile(filepath.Join(p.Workdir, tc.fileName))
				if err != nil || string(got) != tc.fileWant {
					t.Errorf("%s = %q, %v; want %q", tc.fileName, got, err, tc.fileWant)
				}
			}
		})
	}
}

// TestCLIBackgroundBash checks both results of a background command: the
// turn's own and the one the CLI starts when the task ends.
func TestCLIBackgroundBash(t *testing.T) {
	srv := New(t)
	p := startCLI(t, srv, cliOptions{})
	p.sendUser("[bgbash sleep 1 && touch bg.txt]")
	for {
		m := p.next(turnTimeout)
		if m.Type == "control_request" {
			p.allow(m)
			continue
		}
		if m.Type == "result" {
			if m.str("result") != "started in background" {
				t.Fatalf("first result %s", m.Raw)
			}
			break
		}
	}
	res := p.waitResult(turnTimeout)
	if !strings.HasPrefix(res.str("result"), "background done: ") || !strings.Contains(res.str("result"), "completed") {
		t.Fatalf("second result %s", res.Raw)
	}
	if _, err := os.Stat(filepath.Join(p.Workdir, "bg.txt")); err != nil {
		t.Errorf("background command did not run: %v", err)
	}
}

func paths(reqs []Request) []string {
	var out []string
	for _, r := range reqs {
		out = append(out, r.Method+" "+r.Path+"?"+r.RawQuery)
	}
	return out
}

func scripts(reqs []Request) string {
	var out []string
	for _, r := range reqs {
		out = append(out, r.Script)
	}
	return strings.Join(out, ",")
}

// TestCLISetModelProbe documents the one non-streaming request the CLI
// makes: after set_model it probes the new model with max_tokens 1.
func TestCLISetModelProbe(t *testing.T) {
	srv := New(t)
	p := startCLI(t, srv, cliOptions{})
	p.sendUser("hello")
	p.waitResult(turnTimeout)
	p.send(map[string]any{"type": "control_request", "request_id": "host-1", "request": map[string]any{"subtype": "set_model", "model": "claude-sonnet-5-5"}})
	resp := p.waitFor(turnTimeout, "control_response", func(m cliMsg) bool { return m.Type == "control_response" })
	if resp.str("response.subtype") != "success" {
		t.Fatalf("set_model answer %s", resp.Raw)
	}
	p.sendUser("after switch")
	if res := p.waitResult(turnTimeout); res.str("result") != "pong: after switch" {
		t.Fatalf("result %s", res.Raw)
	}
	var probes, streams []Request
	for _, r := range srv.MessagesRequests() {
		if r.Stream {
			streams = append(streams, r)
		} else {
			probes = append(probes, r)
		}
	}
	if len(probes) != 1 || probes[0].MaxTokens != 1 || probes[0].Model != "claude-sonnet-5-5" || len(probes[0].Tools) != 0 || probes[0].Status != 200 {
		t.Errorf("probes %+v", probes)
	}
	if len(streams) != 2 {
		t.Errorf("%d streaming requests, want 2", len(streams))
	} else if streams[1].Model != "claude-sonnet-5-5" {
		t.Errorf("model after set_model %q", streams[1].Model)
	}
}
