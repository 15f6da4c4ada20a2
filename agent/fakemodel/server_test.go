package fakemodel

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// postAPI sends body to srv and returns the response; the caller closes it.
func postAPI(t *testing.T, c *http.Client, url, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Api-Key", "secret-key-value")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// closingClient returns a client whose idle connections are closed at cleanup
// (so goroutine-leak checks stay exact).
func closingClient(t *testing.T) *http.Client {
	c := &http.Client{Transport: &http.Transport{}, Timeout: 30 * time.Second}
	t.Cleanup(c.CloseIdleConnections)
	return c
}

func TestServerStreaming(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	srv := New(t)
	c := closingClient(t)
	resp := postAPI(t, c, srv.URL()+"/v1/messages?beta=true", msgs(`[{"role":"user","content":"hello"}]`))
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" || resp.Header.Get("request-id") == "" {
		t.Fatalf("status %d headers %v", resp.StatusCode, resp.Header)
	}
	a := assemble(t, parseSSE(t, resp.Body))
	if len(a.Blocks) != 1 || a.Blocks[0]["text"] != "pong: hello" || a.StopReason != "end_turn" || a.InTokens < 10 || a.OutTokens < 1 {
		t.Errorf("assembled %+v", a)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests recorded", len(reqs))
	}
	r := reqs[0]
	if !r.IsMessages() || r.RawQuery != "beta=true" || !r.Stream || r.Model != "claude-test" || r.Status != 200 || r.Script != "pong" || r.Reply != "pong: hello" {
		t.Errorf("recorded %+v", r)
	}
	if got := r.Header.Get("X-Api-Key"); got != "[redacted]" {
		t.Errorf("api key recorded as %q", got)
	}
	if strings.Contains(string(mustJSON(reqs)), "secret-key-value") {
		t.Errorf("secret leaked into Requests()")
	}
	resp.Body.Close()
	c.CloseIdleConnections()
	srv.Close()
}

func TestServerAnswers(t *testing.T) {
	srv := New(t)
	c := closingClient(t)
	tests := []struct {
		name, method, path, body string
		status                   int
		wantBody                 string // substring
		script                   string
	}{
		{"non-streaming probe", "POST", "/v1/messages?beta=true", `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":[{"type":"text","text":"Hi"}]}]}`,
			200, `"content":[{"type":"text","text":"pong: Hi"}],"stop_reason":"end_turn"`, "pong"},
		{"scripted 500", "POST", "/v1/messages", msgs(`[{"role":"user","content":"[error 500]"}]`),
			500, `{"type":"error","error":{"type":"api_error","message":"fakemodel: scripted error 500"}`, "error"},
		{"scripted 401", "POST", "/v1/messages", msgs(`[{"role":"user","content":"[error 401]"}]`),
			401, `"type":"authentication_error"`, "error"},
		{"count_tokens", "POST", "/v1/messages/count_tokens", msgs(`[{"role":"user","content":"abcdefgh"}]`),
			200, `{"input_tokens":12}`, "count-tokens"},
		{"bad json", "POST", "/v1/messages", `{"messages":`,
			400, `"type":"invalid_request_error"`, "bad-request"},
		{"unknown endpoint", "GET", "/v1/models", "",
			404, `"type":"not_found_error","message":"fakemodel: no route for GET /v1/models"`, "not-found"},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(tc.method, srv.URL()+tc.path, strings.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.status || !strings.Contains(string(body), tc.wantBody) {
				t.Errorf("status %d body %s\nwant %d containing %s", resp.StatusCode, body, tc.status, tc.wantBody)
			}
			if !json.Valid(body) {
				t.Errorf("body is not JSON: %s", body)
			}
			reqs := srv.Requests()
			if len(reqs) != i+1 {
				t.Fatalf("%d requests recorded, want %d", len(reqs), i+1)
			}
			if r := reqs[i]; r.Status != tc.status || r.Script != tc.script || r.Method != tc.method {
				t.Errorf("recorded status %d script %q method %s", r.Status, r.Script, r.Method)
			}
		})
	}
}

func TestServerToolIDsAreUnique(t *testing.T) {
	srv := New(t)
	c := closingClient(t)
	var ids []string
	for range 2 {
		resp := postAPI(t, c, srv.URL()+"/v1/messages", msgs(`[{"role":"user","content":"[bash ls]"}]`))
		a := assemble(t, parseSSE(t, resp.Body))
		resp.Body.Close()
		if len(a.Blocks) != 2 || a.StopReason != "tool_use" {
			t.Fatalf("assembled %+v", a)
		}
		ids = append(ids, a.Blocks[1]["id"].(string))
	}
	if ids[0] != "toolu_fake_001" || ids[1] != "toolu_fake_002" {
		t.Errorf("tool ids %v", ids)
	}
}

// TestServerSlowStream checks the pacing of [slow N] and that a client
// hanging up mid-stream neither blocks the handler nor Close.
func TestServerSlowStream(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	srv := New(t)
	c := closingClient(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL()+"/v1/messages",
		strings.NewReader(msgs(`[{"role":"user","content":"[slowms 80] [slow 50] go"}]`)))
	start := time.Now()
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(resp.Body)
	deltas := 0
	for deltas < 3 && sc.Scan() {
		if strings.HasPrefix(sc.Text(), "event: content_block_delta") {
			deltas++
		}
	}
	if deltas < 3 {
		t.Fatalf("saw %d deltas", deltas)
	}
	// The first delta goes out at once, each later one after an 80ms pause.
	if d := time.Since(start); d < 160*time.Millisecond {
		t.Errorf("3 deltas after %v, want >= 160ms", d)
	}
	cancel()
	resp.Body.Close()
	r, err := srv.WaitForRequest(testCtx(t), func(r Request) bool { return r.Status != 0 })
	if err != nil {
		t.Fatal(err)
	}
	if r.Script != "pong (cut)" {
		t.Errorf("script %q, want the cut stream recorded", r.Script)
	}
	start = time.Now()
	c.CloseIdleConnections()
	srv.Close()
	if d := time.Since(start); d > time.Second {
		t.Errorf("Close took %v", d)
	}
}

// TestServerCloseCutsStreams checks that Close does not wait for a slow
// stream whose client is still connected.
func TestServerCloseCutsStreams(t *testing.T) {
	srv := New(t)
	c := closingClient(t)
	resp := postAPI(t, c, srv.URL()+"/v1/messages", msgs(`[{"role":"user","content":"[slow 100] go"}]`))
	defer resp.Body.Close()
	if _, err := srv.WaitForRequest(testCtx(t), func(r Request) bool { return true }); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	srv.Close()
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Close took %v with an open stream", d)
	}
	if _, err := io.ReadAll(resp.Body); err == nil {
		t.Errorf("stream completed although the server closed")
	}
	srv.Close() // idempotent
}

func TestWaitForRequestTimeout(t *testing.T) {
	srv := New(t)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := srv.WaitForRequest(ctx, func(Request) bool { return true }); err == nil {
		t.Fatal("want a timeout error")
	}
}

func TestEnv(t *testing.T) {
	srv := New(t)
	env := strings.Join(srv.Env(), "\n")
	for _, want := range []string{"ANTHROPIC_BASE_URL=" + srv.URL(), "ANTHROPIC_API_KEY=test-key", "CLAUDE_CODE_MAX_RETRIES=0",
		"DISABLE_TELEMETRY=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1"} {
		if !strings.Contains(env, want) {
			t.Errorf("Env lacks %s", want)
		}
	}
	if strings.Contains(env, "HOME=") || strings.Contains(env, "TMPDIR=") {
		t.Errorf("Env must leave HOME and TMPDIR to the caller")
	}
	if !strings.HasPrefix(srv.URL(), "http://127.0.0.1:") {
		t.Errorf("URL %s", srv.URL())
	}
}

// testCtx returns a context that ends after 10s or with the test.
func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}
