package mcprelay

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/agentbridge/agentbridge/internal/testkit"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// wait bounds every read of the tests.
const wait = 10 * time.Second

// echo answers a request with its method as the result.
func echo(_ context.Context, msg json.RawMessage) json.RawMessage {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	_ = json.Unmarshal(msg, &m)
	if len(m.ID) == 0 {
		return nil
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": map[string]string{"method": m.Method}})
	return b
}

// listen serves h on a socket in a fresh directory; cleanup closes it.
func listen(t *testing.T, h Handler, cfg Config) *Server {
	t.Helper()
	if cfg.Timeout == 0 {
		cfg.Timeout = wait
	}
	s, err := Listen(filepath.Join(t.TempDir(), "mcp.sock"), h, cfg)
	if err != nil {
		t.Fatalf("Listen: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// client is one connection to a Server.
type client struct {
	t *testing.T
	c net.Conn
	r *bufio.Reader
}

func dial(t *testing.T, s *Server) *client {
	t.Helper()
	c, err := net.Dial("unix", s.Path())
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return &client{t: t, c: c, r: bufio.NewReader(c)}
}

func (c *client) send(line string) {
	c.t.Helper()
	if _, err := c.c.Write([]byte(line + "\n")); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

// next reads one answer line, failing after wait.
func (c *client) next() map[string]any {
	c.t.Helper()
	_ = c.c.SetReadDeadline(time.Now().Add(wait))
	line, err := c.r.ReadBytes('\n')
	if err != nil {
		c.t.Fatalf("no answer: %v (got %q)", err, line)
	}
	var m map[string]any
	if err := json.Unmarshal(line, &m); err != nil {
		c.t.Fatalf("answer is not JSON: %q", line)
	}
	return m
}

// errCode is the error code of an answer (0 = none).
func errCode(m map[string]any) int {
	e, _ := m["error"].(map[string]any)
	code, _ := e["code"].(float64)
	return int(code)
}

// TestServerGarbage: a line that is not a JSON object gets a JSON-RPC
// error with id null and never reaches the server; a request after it is
// still answered, a notification is not; the connection stays usable.
func TestServerGarbage(t *testing.T) {
	var seen atomic.Int32
	s := listen(t, func(ctx context.Context, msg json.RawMessage) json.RawMessage {
		seen.Add(1)
		return echo(ctx, msg)
	}, Config{})
	c := dial(t, s)
	for _, tc := range []struct {
		line string
		code int
	}{
		{"this is not json", codeParseError},
		{`{"jsonrpc":"2.0","id":`, codeParseError},
		{`[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]`, codeInvalidRequest},
		{`42`, codeInvalidRequest},
		{"\x00\xff\xfe", codeParseError},
		{`{"a":` + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + `}`, codeParseError}, // deeper than encoding/json goes
	} {
		c.send(tc.line)
		if m := c.next(); errCode(m) != tc.code || m["id"] != nil {
			t.Errorf("%q answered %v, want error %d with id null", tc.line, m, tc.code)
		}
	}
	c.send("")    // blank lines are skipped
	c.send("   ") // so is white space
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	c.send(`{"jsonrpc":"2.0","id":7,"method":"tools/list"}`)
	m := c.next()
	if m["id"] != float64(7) || m["result"].(map[string]any)["method"] != "tools/list" {
		t.Errorf("answer %v", m)
	}
	// The notification is handled concurrently: it may end after the request.
	testkit.WaitUntil(t, "the server saw the notification and the request", wait, func() bool { return seen.Load() == 2 })
}

// TestServerLineTooLong: a line over MaxLine is answered with an error and
// the connection closed; the socket still serves a new connection.
func TestServerLineTooLong(t *testing.T) {
	var seen atomic.Int32
	s := listen(t, func(ctx context.Context, msg json.RawMessage) json.RawMessage {
		seen.Add(1)
		return echo(ctx, msg)
	}, Config{MaxLine: 1024})
	c := dial(t, s)
	go func() { // the server stops reading: the rest may never be read
		_, _ = c.c.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"` + strings.Repeat("x", 4096) + "\"}\n"))
	}()
	if m := c.next(); errCode(m) != codeInvalidRequest || !strings.Contains(m["error"].(map[string]any)["message"].(string), "longer than 1024") {
		t.Errorf("answer to a long line: %v", m)
	}
	_ = c.c.SetReadDeadline(time.Now().Add(wait))
	if _, err := c.r.ReadByte(); !errors.Is(err, io.EOF) {
		t.Errorf("the connection stayed open after a long line: %v", err)
	}
	c2 := dial(t, s)
	c2.send(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	if m := c2.next(); m["id"] != float64(2) {
		t.Errorf("answer on a new connection: %v", m)
	}
	// Exactly at the limit is fine.
	c2.send(`{"jsonrpc":"2.0","id":3,"method":"` + strings.Repeat("y", 1024-len(`{"jsonrpc":"2.0","id":3,"method":""}`)) + `"}`)
	if m := c2.next(); m["id"] != float64(3) {
		t.Errorf("answer to a line of exactly MaxLine bytes: %v", m)
	}
	if n := seen.Load(); n != 2 {
		t.Errorf("the server saw %d messages, want 2", n)
	}
}

// TestServerConcurrentAndBounded: a blocking call does not hold up the
// next message; a call is bounded by Timeout; a handler that panics, gives
// no answer or an invalid one gets the request a JSON-RPC error.
func TestServerConcurrentAndBounded(t *testing.T) {
	release := make(chan struct{})
	s := listen(t, func(ctx context.Context, msg json.RawMessage) json.RawMessage {
		var m struct {
			Method string `json:"method"`
		}
		_ = json.Unmarshal(msg, &m)
		switch m.Method {
		case "block":
			select {
			case <-release:
			case <-ctx.Done():
				return []byte(`{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"` + ctx.Err().Error() + `"}}`)
			}
		case "forever":
			<-ctx.Done()
			return []byte(`{"jsonrpc":"2.0","id":5,"result":"ended"}`)
		case "panic":
			panic("boom")
		case "nothing":
			return nil
		case "invalid":
			return []byte(`{"jsonrpc":`)
		case "indented":
			return []byte("{\n  \"jsonrpc\": \"2.0\",\n  \"id\": 6,\n  \"result\": {}\n}")
		}
		return echo(ctx, msg)
	}, Config{Timeout: 500 * time.Millisecond})
	c := dial(t, s)
	c.send(`{"jsonrpc":"2.0","id":1,"method":"block"}`)
	c.send(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	if m := c.next(); m["id"] != float64(2) {
		t.Fatalf("the second message waited for the first: %v", m)
	}
	close(release)
	if m := c.next(); m["id"] != float64(1) || m["result"] == nil {
		t.Errorf("the blocked call's answer: %v", m)
	}
	start := time.Now()
	c.send(`{"jsonrpc":"2.0","id":5,"method":"forever"}`)
	if m := c.next(); m["result"] != "ended" || time.Since(start) > 5*time.Second {
		t.Errorf("a call past the timeout: %v after %s", m, time.Since(start))
	}
	for id, method := range map[int]string{10: "panic", 11: "nothing", 12: "invalid"} {
		c.send(`{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"method":"` + method + `"}`)
		if m := c.next(); m["id"] != float64(id) || errCode(m) != codeInternalError {
			t.Errorf("%s: answer %v, want an internal error for id %d", method, m, id)
		}
	}
	c.send(`{"jsonrpc":"2.0","method":"panic"}`) // a notification: no answer, no crash
	c.send(`{"jsonrpc":"2.0","id":6,"method":"indented"}`)
	if m := c.next(); m["id"] != float64(6) {
		t.Errorf("an indented answer: %v", m)
	}
}

// TestServerMaxConnsAndClose: connections past MaxConns are closed; Close
// ends the calls running (their context), closes the connections and
// removes the socket.
func TestServerMaxConnsAndClose(t *testing.T) {
	started := make(chan struct{}, 1)
	s, err := Listen(filepath.Join(t.TempDir(), "mcp.sock"), func(ctx context.Context, msg json.RawMessage) json.RawMessage {
		started <- struct{}{}
		<-ctx.Done()
		return nil
	}, Config{Timeout: time.Hour, MaxConns: 1})
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(s.Path()); err != nil || fi.Mode().Perm() != 0o600 || fi.Mode()&os.ModeSocket == 0 {
		t.Fatalf("socket %v, %v: want a socket of mode 0600", fi, err)
	}
	c := dial(t, s)
	c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call"}`)
	select {
	case <-started:
	case <-time.After(wait):
		t.Fatal("the call never started")
	}
	extra := dial(t, s)
	_ = extra.c.SetReadDeadline(time.Now().Add(wait))
	if _, err := extra.r.ReadByte(); !errors.Is(err, io.EOF) {
		t.Errorf("a connection past MaxConns: %v, want it closed", err)
	}
	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Errorf("Close: %v", err)
		}
	case <-time.After(wait):
		t.Fatal("Close did not end a call in progress")
	}
	if _, err := os.Stat(s.Path()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the socket is left after Close: %v", err)
	}
	_ = c.c.SetReadDeadline(time.Now().Add(wait))
	if _, err := io.ReadAll(c.r); errors.Is(err, os.ErrDeadlineExceeded) { // the call may be answered first
		t.Error("the connection is still open after Close")
	}
}

// TestServerSlowReader: a relay that never reads its answers is
// disconnected once a write waits WriteTimeout; the Server still closes.
func TestServerSlowReader(t *testing.T) {
	big := json.RawMessage(`{"jsonrpc":"2.0","id":1,"result":"` + strings.Repeat("x", 256<<10) + `"}`)
	s := listen(t, func(context.Context, json.RawMessage) json.RawMessage { return big }, Config{WriteTimeout: 200 * time.Millisecond})
	c := dial(t, s)
	for range 64 { // 16 MiB of answers, far more than the socket buffers hold
		c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	}
	testkit.WaitUntil(t, "the connection dropped", wait, func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return len(s.conns) == 0
	})
	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Errorf("Close: %v", err)
		}
	case <-time.After(wait):
		t.Fatal("Close hung on a relay that does not read")
	}
}
