package coord

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/internal/testkit"
	"github.com/agentbridge/agentbridge/store/internal/storetest"
	"github.com/agentbridge/agentbridge/store/sqldb"
)

// recv returns the next payload on ch, failing t after 10 s or when ch
// is closed.
func recv(t *testing.T, ch <-chan string) string {
	t.Helper()
	select {
	case p, ok := <-ch:
		if !ok {
			t.Fatal("listen channel closed")
		}
		return p
	case <-time.After(10 * time.Second):
		t.Fatal("no signal in 10 s")
	}
	return ""
}

// wantClosed waits for ch to be closed (after its context ended).
func wantClosed(t *testing.T, ch <-chan string) {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case _, ok := <-ch:
			if !ok {
				return
			}
		case <-timeout:
			t.Fatal("listen channel not closed 10 s after its context ended")
		}
	}
}

func notify(t *testing.T, s *Coordinator, channel, payload string) {
	t.Helper()
	if err := s.Notify(context.Background(), channel, payload); err != nil {
		t.Fatalf("Notify(%s, %s): %v", channel, payload, err)
	}
}

// TestNotifyListen: every listener on a channel receives its signals in
// order, and only its own channel's; the channels close when the context
// ends; bad names and payloads are refused.
func TestNotifyListen(t *testing.T) {
	kit.Each(t, func(t *testing.T, s *Coordinator) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var chans []<-chan string
		for _, name := range []string{"replica:a", "replica:a", "replica:b"} {
			ch, err := s.Listen(ctx, name)
			if err != nil {
				t.Fatalf("Listen(%s): %v", name, err)
			}
			chans = append(chans, ch)
		}
		notify(t, s, "replica:a", "conversation:1")
		notify(t, s, "replica:b", "conversation:9")
		notify(t, s, "replica:a", "conversation:2")
		for i, ch := range chans[:2] {
			if got := []string{recv(t, ch), recv(t, ch)}; got[0] != "conversation:1" || got[1] != "conversation:2" {
				t.Errorf("listener %d got %q, want conversation:1 then :2", i, got)
			}
		}
		if got := recv(t, chans[2]); got != "conversation:9" {
			t.Errorf("replica:b got %q", got)
		}

		long := strings.Repeat("x", 64)
		for _, tt := range []struct{ channel, payload string }{
			{"", "p"}, {long, "p"}, {"c", ""}, {"c", strings.Repeat("p", 8000)},
		} {
			storetest.WantErrIs(t, fmt.Sprintf("Notify(%d-byte channel, %d-byte payload)", len(tt.channel), len(tt.payload)),
				s.Notify(ctx, tt.channel, tt.payload), sqldb.ErrInvalidArgument)
		}
		for _, name := range []string{"", long} {
			_, err := s.Listen(ctx, name)
			storetest.WantErrIs(t, fmt.Sprintf("Listen(%d-byte channel)", len(name)), err, sqldb.ErrInvalidArgument)
		}
		notify(t, s, strings.Repeat("c", 63), strings.Repeat("p", 7999))

		cancel()
		for _, ch := range chans {
			wantClosed(t, ch)
		}
	})
}

// TestListenReconnects: signals cross replicas on PostgreSQL, and a
// listener whose connection the server ends (pg_terminate_backend)
// reconnects by itself, says Resync, and receives what is sent after;
// idle timeouts (pings) lose nothing.
func TestListenReconnects(t *testing.T) {
	rs := coordinators(t, sqldb.DriverPostgres, 2)
	a, b := rs[0], rs[1]
	sig := a.sig.(*pgSignals)
	sig.retry, sig.ping = 10*time.Millisecond, 20*time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch, err := a.Listen(ctx, "replica:a")
	if err != nil {
		t.Fatal(err)
	}
	listener := func(except int) int {
		t.Helper()
		var pid int
		testkit.WaitUntilSeen(t, "the listening connection", 10*time.Second, func() (bool, string) {
			err := b.db.Read().QueryRow(`SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = ? AND pid <> ?`, listenAppName("replica:a"), except).Scan(&pid)
			return err == nil, fmt.Sprint(err)
		})
		return pid
	}
	first := listener(0)
	time.Sleep(100 * time.Millisecond) // a few idle pings
	notify(t, b, "replica:a", "before")
	if got := recv(t, ch); got != "before" {
		t.Fatalf("got %q, want before", got)
	}

	var ended bool
	if err := b.db.Read().QueryRow(`SELECT pg_terminate_backend(?)`, first).Scan(&ended); err != nil || !ended {
		t.Fatalf("pg_terminate_backend: %v, %v", ended, err)
	}
	if got := recv(t, ch); got != Resync {
		t.Fatalf("after the connection was ended: got %q, want Resync", got)
	}
	listener(first)
	notify(t, b, "replica:a", "after")
	if got := recv(t, ch); got != "after" {
		t.Fatalf("after the reconnect: got %q, want after", got)
	}
	cancel()
	wantClosed(t, ch)
}

// TestListenSlowReader: a reader that falls more than listenBuffer signals
// behind gets Resync in place of the ones dropped, then the newer ones;
// Notify never waits for it.
func TestListenSlowReader(t *testing.T) {
	s := kit.Open(t, sqldb.DriverSQLite)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch, err := s.Listen(ctx, "replica:a")
	if err != nil {
		t.Fatal(err)
	}
	const n = listenBuffer + 50
	for i := range n {
		notify(t, s, "replica:a", fmt.Sprint(i))
	}
	// One payload may already be on its way to the channel; Resync
	// replaces the listenBuffer queued behind it, and the rest follow in
	// order.
	got := recv(t, ch)
	if got == "0" {
		got = recv(t, ch)
	}
	if got != Resync {
		t.Fatalf("got %q, want Resync first", got)
	}
	first, err := strconv.Atoi(recv(t, ch))
	if err != nil || first <= listenBuffer || first > listenBuffer+2 {
		t.Fatalf("first after Resync: %d, %v; want the one after the dropped %d", first, err, listenBuffer)
	}
	for i := first + 1; i < n; i++ {
		if got := recv(t, ch); got != strconv.Itoa(i) {
			t.Fatalf("got %q, want %d", got, i)
		}
	}
	cancel()
	wantClosed(t, ch)
}
