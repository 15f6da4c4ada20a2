package mcprelay

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/agent/mcprelay/relay"
	"github.com/agentbridge/agentbridge/internal/testkit"
)

// TestRelay: the relay copies stdin lines to the socket and the answers to
// stdout, and returns 0 once stdin ends — also for a socket whose path is
// longer than a socket address holds.
func TestRelay(t *testing.T) {
	long := filepath.Join(t.TempDir(), strings.Repeat("d", 60), strings.Repeat("e", 60))
	if err := os.MkdirAll(long, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{t.TempDir(), long} {
		s, err := Listen(filepath.Join(dir, "mcp-0.sock"), echo, Config{Timeout: wait})
		if err != nil {
			t.Fatalf("Listen in a directory of %d bytes: %v", len(dir), err)
		}
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		var stderr bytes.Buffer
		code := make(chan int, 1)
		go func() { code <- relay.Run([]string{s.Path()}, inR, outW, &stderr) }()
		if _, err := inW.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}` + "\n")); err != nil {
			t.Fatal(err)
		}
		line := make(chan []byte, 1)
		go func() {
			l, _ := bufio.NewReader(outR).ReadBytes('\n')
			line <- l
		}()
		select {
		case l := <-line:
			var m map[string]any
			if json.Unmarshal(l, &m) != nil || m["id"] != float64(1) {
				t.Errorf("relayed answer %q", l)
			}
		case <-time.After(wait):
			t.Fatalf("no answer through the relay (stderr %q)", stderr.String())
		}
		inW.Close()
		select {
		case c := <-code:
			if c != 0 {
				t.Errorf("exit code %d after stdin ended (stderr %q)", c, stderr.String())
			}
		case <-time.After(wait):
			t.Fatal("the relay did not end with its stdin")
		}
		outR.Close()
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	}
}

// TestRelayEndsWithTheSocket: the relay returns when the bridge closes the
// socket (the session ended), although its stdin stays open.
func TestRelayEndsWithTheSocket(t *testing.T) {
	s, err := Listen(filepath.Join(t.TempDir(), "mcp.sock"), echo, Config{Timeout: wait})
	if err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	defer inW.Close() // ends the copy of stdin, left blocked
	code := make(chan int, 1)
	go func() { code <- relay.Run([]string{s.Path()}, inR, io.Discard, io.Discard) }()
	testkit.WaitUntil(t, "the relay connected", wait, func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return len(s.conns) == 1
	})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case c := <-code:
		if c != 0 {
			t.Errorf("exit code %d", c)
		}
	case <-time.After(wait):
		t.Fatal("the relay did not end when the socket closed")
	}
}

// TestRelayRefuses: bad arguments exit 2, a socket nobody serves 1.
func TestRelayRefuses(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
	}{
		{nil, 2}, {[]string{"relative.sock"}, 2}, {[]string{"/a", "/b"}, 2},
		{[]string{filepath.Join(t.TempDir(), "none.sock")}, 1},
	} {
		var stderr bytes.Buffer
		if c := relay.Run(tc.args, strings.NewReader(""), io.Discard, &stderr); c != tc.code || stderr.Len() == 0 {
			t.Errorf("relay.Run(%q) = %d (%q), want %d and a reason", tc.args, c, stderr.String(), tc.code)
		}
	}
}
