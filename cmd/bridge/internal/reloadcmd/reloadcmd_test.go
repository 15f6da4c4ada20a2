package reloadcmd

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/bridges/app/healthz"
)

// serveHealthz serves a /healthz whose config section is body(n) at the n-th
// request (from 1).
func serveHealthz(t *testing.T, body func(n int64) string) string {
	t.Helper()
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/healthz" {
			http.NotFound(w, r)
			return
		}
		w.Write([]byte(`{"status":"ok","bots":[],"config":` + body(n.Add(1)) + `}`))
	}))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

// TestWaitReloaded: `bridge reload` reports the new generation once
// /healthz shows it, and a refusal newer than its signal as an error
// with the problems.
func TestWaitReloaded(t *testing.T) {
	started := time.Now()
	since := started.Add(time.Second).UTC().Format(time.RFC3339)
	listen := serveHealthz(t, func(n int64) string {
		if n < 3 {
			return `{"generation":1,"since":"2026-01-01T00:00:00Z","trigger":"start"}`
		}
		return `{"generation":2,"since":"` + since + `","trigger":"signal"}`
	})
	before, err := healthConfigOf(t.Context(), listen)
	if err != nil || before.Generation != 1 {
		t.Fatalf("before: %+v, %v", before, err)
	}
	var out bytes.Buffer
	if err := waitReloaded(t.Context(), &out, listen, *before, started); err != nil {
		t.Fatal(err)
	}
	if want := "Config reloaded: generation 2 in force since " + since + ".\n"; out.String() != want {
		t.Errorf("output %q, want %q", out.String(), want)
	}

	refusedAt := started.Add(time.Second).UTC().Format(time.RFC3339Nano)
	listen = serveHealthz(t, func(int64) string {
		return `{"generation":1,"since":"2026-01-01T00:00:00Z","trigger":"start",` +
			`"refused":["bridge.yaml:3: agents: want a mapping"],"refused_at":"` + refusedAt + `"}`
	})
	err = waitReloaded(t.Context(), &out, listen, healthz.Config{Generation: 1}, started)
	if err == nil || !strings.Contains(err.Error(), "refused the config; generation 1 stays in force:\nbridge.yaml:3: agents: want a mapping") {
		t.Errorf("refused reload: %v", err)
	}
}

// TestWaitReloadedUnchanged: when the bridge read the file after the
// signal and found it in force (its own file watch applied it a moment
// before `bridge reload` looked), the command says so at once instead of
// waiting out reloadWait for a generation that never comes; a read from
// before the signal is not taken for it.
func TestWaitReloadedUnchanged(t *testing.T) {
	started := time.Now()
	old := started.Add(-time.Second).UTC().Format(time.RFC3339Nano)
	checked := started.Add(50 * time.Millisecond).UTC().Format(time.RFC3339Nano)
	listen := serveHealthz(t, func(n int64) string {
		at := old
		if n >= 3 {
			at = checked
		}
		return `{"generation":2,"since":"2026-01-01T00:00:00Z","trigger":"file","checked_at":"` + at + `"}`
	})
	var out bytes.Buffer
	begin := time.Now()
	if err := waitReloaded(t.Context(), &out, listen, healthz.Config{Generation: 2}, started); err != nil {
		t.Fatal(err)
	}
	if want := "Config unchanged: the file says what runs, generation 2 in force since 2026-01-01T00:00:00Z.\n"; out.String() != want {
		t.Errorf("output %q, want %q", out.String(), want)
	}
	if waited := time.Since(begin); waited >= reloadWait {
		t.Errorf("waited %s: the unchanged file was not recognised", waited)
	}
}
