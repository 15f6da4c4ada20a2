package egress

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

// BenchmarkModelRequest is one model request (a 100 KB body, as a first
// turn's, and a short streamed answer) to a loopback model, directly and
// through a gate: the difference is what the proxy adds to each model call
// of a turn (here on a Unix socket; in a sandbox the bridge serves the
// listener the launcher handed over, on the sandbox's loopback).
//
//	go test ./agent/sandbox/egress -run '^$' -bench ModelRequest -benchtime 300x
func BenchmarkModelRequest(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		for i := range 6 {
			fmt.Fprintf(w, "event: e%d\ndata: {\"type\":\"content_block_delta\"}\n\n", i)
			w.(http.Flusher).Flush()
		}
	}))
	defer srv.Close()
	body := bytes.Repeat([]byte("x"), 100<<10)
	run := func(b *testing.B, c *http.Client) {
		for b.Loop() {
			resp, err := c.Post(srv.URL+"/v1/messages", "application/json", bytes.NewReader(body))
			if err != nil {
				b.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}
	b.Run("direct", func(b *testing.B) { run(b, &http.Client{Transport: &http.Transport{}}) })
	b.Run("proxy", func(b *testing.B) {
		model, _ := ModelEndpoint(srv.URL)
		pol, _ := NewPolicy(model, nil, nil)
		p := New(Config{})
		defer p.Close()
		sock := b.TempDir() + "/p.sock"
		if _, err := attachUnix(p, sock, pol, "bench", "s"); err != nil {
			b.Fatal(err)
		}
		run(b, viaProxy(sock))
	})
}
