package connlease_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/features/replica/connlease"
	"github.com/agentbridge/agentbridge/bridges/kits/bridgetest"
	"github.com/agentbridge/agentbridge/bridges/kits/platformtest"
	"github.com/agentbridge/agentbridge/store"
	"github.com/agentbridge/agentbridge/store/pgtest"
	"go.uber.org/goleak"
)

// pg is the test process's PostgreSQL (pgtest), started by the first test
// that needs one.
var pg pgtest.Shared

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) != "" { // a replica process of TestDiscordHolderKilled: no server of its own
		os.Exit(m.Run())
	}
	code := m.Run()
	if err := pg.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// replicas opens n stores (n replicas' connection pools) on one fresh
// PostgreSQL database.
func replicas(t *testing.T, n int) []*store.Store {
	t.Helper()
	srv := pg.Need(t)
	dsn := srv.NewDatabase(t, "")
	out := make([]*store.Store, n)
	for i := range out {
		out[i] = bridgetest.OpenPostgresStore(t, dsn)
	}
	return out
}

// platform plays one bot's platform: it records which replica is
// connected and fails the test when two are at once.
type platform struct {
	t       *testing.T
	mu      sync.Mutex
	live    string   // the replica connected now, "" = none
	history []string // replicas in the order they connected
	changed chan struct{}
}

func newPlatform(t *testing.T) *platform { return &platform{t: t, changed: make(chan struct{})} }

// connect is replica name's connect function: connected until ctx ends.
func (p *platform) connect(name string) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		p.mu.Lock()
		if p.live != "" {
			p.t.Errorf("%s connected while %s is connected", name, p.live)
		}
		p.live = name
		p.history = append(p.history, name)
		close(p.changed)
		p.changed = make(chan struct{})
		p.mu.Unlock()
		<-ctx.Done()
		time.Sleep(20 * time.Millisecond) // a disconnect takes a moment
		p.mu.Lock()
		p.live = ""
		close(p.changed)
		p.changed = make(chan struct{})
		p.mu.Unlock()
		return nil
	}
}

// waitLive waits until replica name is connected and returns when.
func (p *platform) waitLive(name string, within time.Duration) time.Time {
	p.t.Helper()
	deadline := time.After(within)
	for {
		p.mu.Lock()
		live, ch := p.live, p.changed
		p.mu.Unlock()
		if live == name {
			return time.Now()
		}
		select {
		case <-ch:
		case <-deadline:
			p.t.Fatalf("%s not connected within %v (connected: %q)", name, within, live)
		}
	}
}

const ttl = time.Second

// run starts a Hold of replica name on leases and returns a function that
// stops it (graceful) and returns Hold's result.
func run(t *testing.T, leases connlease.Leases, name string, p *platform, h bridges.Handler) (stop func() error) {
	t.Helper()
	g, err := connlease.New(connlease.Options{Leases: leases, Resource: connlease.Resource("discord", "bot"), Owner: name, TTL: ttl})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- g.Hold(ctx, h, p.connect(name)) }()
	var once sync.Once
	var res error
	stop = func() error {
		once.Do(func() {
			cancel()
			res = <-done
		})
		return res
	}
	t.Cleanup(func() { _ = stop() })
	return stop
}

// TestGracefulStopHandsOver: of two replicas one connects; the other
// stands by, naming the holder; when the holder stops it releases the
// lease and the standby connects within a poll, long before the lease
// would have expired.
func TestGracefulStopHandsOver(t *testing.T) {
	sts := replicas(t, 2)
	p := newPlatform(t)
	stopA := run(t, sts[0], "replica-a", p, nil)
	p.waitLive("replica-a", 5*time.Second)
	hb := &platformtest.StateRecorder{}
	run(t, sts[1], "replica-b", p, hb)
	time.Sleep(ttl) // several polls and renewals
	if got := hb.Last(); got.State != bridges.ConnStandby || got.Reason != "replica replica-a holds the connection" {
		t.Errorf("standby reported %+v, want standby naming replica-a", got)
	}
	stopped := time.Now()
	if err := stopA(); err != nil {
		t.Fatalf("Hold of the holder returned %v", err)
	}
	took := p.waitLive("replica-b", 5*time.Second).Sub(stopped)
	if took > ttl/2 {
		t.Errorf("standby connected %v after a graceful stop, want within a poll (%v)", took, ttl/5)
	}
	t.Logf("hand-over after a graceful stop: %v", took)
}

// TestDeadHolderTakenOver: the holder is cut off from the database (as
// if frozen or its network gone): it cannot renew, so it disconnects on
// its own before its lease expires, and the standby connects once it
// has — never both at once (platform fails the test otherwise) — within
// the lease time plus a poll. When the old holder comes back it stands by.
func TestDeadHolderTakenOver(t *testing.T) {
	sts := replicas(t, 2)
	p := newPlatform(t)
	a := &bridgetest.CutLeases{Leases: sts[0]}
	ha := &platformtest.StateRecorder{}
	run(t, a, "replica-a", p, ha)
	p.waitLive("replica-a", 5*time.Second)
	run(t, sts[1], "replica-b", p, nil)
	time.Sleep(ttl / 2)

	a.Cut.Store(true)
	cut := time.Now()
	took := p.waitLive("replica-b", 3*ttl).Sub(cut)
	if took > ttl+ttl/5+300*time.Millisecond {
		t.Errorf("standby connected %v after the holder died, want within the lease time + a poll (%v)", took, ttl+ttl/5)
	}
	t.Logf("take-over after the holder was cut off: %v", took)

	a.Cut.Store(false)
	time.Sleep(ttl)
	if got := ha.Last(); got.State != bridges.ConnStandby || got.Reason != "replica replica-b holds the connection" {
		t.Errorf("the old holder reported %+v, want standby naming replica-b", got)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if want := []string{"replica-a", "replica-b"}; fmt.Sprint(p.history) != fmt.Sprint(want) {
		t.Errorf("connections %v, want %v", p.history, want)
	}
}

// TestConnectFailureReleases: connect's own error (a permanent failure)
// ends Hold with that error and releases the lease for the others.
func TestConnectFailureReleases(t *testing.T) {
	sts := replicas(t, 1)
	fail := errors.New("bad token")
	g, err := connlease.New(connlease.Options{Leases: sts[0], Resource: "platform:discord:bot", Owner: "a", TTL: ttl})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Hold(context.Background(), nil, func(context.Context) error { return fail }); !errors.Is(err, fail) {
		t.Fatalf("Hold = %v, want %v", err, fail)
	}
	ls, err := sts[0].Leases(context.Background(), "")
	if err != nil || len(ls) != 0 {
		t.Errorf("leases held after the failure: %v, %v", ls, err)
	}
}
