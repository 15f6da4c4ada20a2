package replica

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/kits/bridgetest"
	"github.com/agentbridge/agentbridge/internal/testkit"
	"github.com/agentbridge/agentbridge/store"
	"github.com/agentbridge/agentbridge/store/pgtest"
)

// pg is the test process's PostgreSQL server, started by the first test
// that needs one and stopped by TestMain.
var pg pgtest.Shared

func TestMain(m *testing.M) {
	code := m.Run()
	if err := pg.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	os.Exit(code)
}

// openPG opens a store on a fresh PostgreSQL database.
func openPG(t *testing.T) *store.Store {
	t.Helper()
	return bridgetest.OpenPostgresStore(t, pg.Need(t).NewDatabase(t, ""))
}

// fakeCore records what a replica asks of the core; a poke claims the
// conversation as the real core does.
type fakeCore struct {
	r       *Replica
	mu      sync.Mutex
	pokes   chan string
	actions chan bridges.Action
	live    map[string]bool
	dropped []string
	woken   chan string // bots of WakeWaiting
}

func newFakeCore(r *Replica) *fakeCore {
	return &fakeCore{r: r, pokes: make(chan string, 100), actions: make(chan bridges.Action, 10), live: map[string]bool{},
		woken: make(chan string, 10)}
}

func (f *fakeCore) WakeWaiting(bot string) { f.woken <- bot }

func (f *fakeCore) Poke(ctx context.Context, id string) {
	if ok, _, err := claim(ctx, f.r, id); err == nil && ok {
		f.mu.Lock()
		f.live[id] = true
		f.mu.Unlock()
		f.pokes <- id
	}
}

func (f *fakeCore) HandleForwardedAction(_ context.Context, a bridges.Action) error {
	f.actions <- a
	return nil
}

func (f *fakeCore) Drop(_ context.Context, id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.live, id)
	f.dropped = append(f.dropped, id)
}

func (f *fakeCore) LiveConversations() map[string]bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	m := map[string]bool{}
	for id := range f.live {
		m[id] = true
	}
	return m
}

func startReplica(t *testing.T, st *store.Store, lease time.Duration) (*Replica, *fakeCore, context.CancelFunc) {
	t.Helper()
	return startReplicaWith(t, st, Options{Store: st, Lease: lease})
}

func startReplicaWith(t *testing.T, st *store.Store, opts Options) (*Replica, *fakeCore, context.CancelFunc) {
	t.Helper()
	r, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	c := newFakeCore(r)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = r.Run(ctx, c) }()
	t.Cleanup(func() { cancel(); <-done })
	select {
	case <-r.Ready():
	case <-time.After(10 * time.Second):
		t.Fatal("replica not listening")
	}
	return r, c, cancel
}

func waitFor[T comparable](t *testing.T, ch <-chan T, want T, within time.Duration) {
	t.Helper()
	deadline := time.After(within)
	for {
		select {
		case got := <-ch:
			if got == want {
				return
			}
		case <-deadline:
			t.Fatalf("no %v within %s", want, within)
		}
	}
}

// TestClaimForwardHandOver: one replica holds a conversation; the other is
// refused, and what it forwards reaches the holder; after a graceful
// release the other takes the conversation's work at once, and after the
// holder dies (no renewals) once the lease expires.
func TestClaimForwardHandOver(t *testing.T) {
	st := openPG(t)
	ctx := context.Background()
	conv, _, err := st.GetOrCreateConversation(ctx, store.ConversationKey{Bot: "b", Channel: "c", Thread: "t"}, "coder", "u")
	if err != nil {
		t.Fatal(err)
	}
	const lease = 2 * time.Second
	a, ca, stopA := startReplica(t, st, lease)
	b, cb, _ := startReplica(t, st, lease)

	ok, rec, err := claim(ctx, a, conv.ID)
	if err != nil || !ok || !rec {
		t.Fatalf("first claim = %v, %v, %v; want a new tenure", ok, rec, err)
	}
	ca.mu.Lock()
	ca.live[conv.ID] = true
	ca.mu.Unlock()
	if ok, rec, err := claim(ctx, a, conv.ID); err != nil || !ok || rec {
		t.Fatalf("holder's claim = %v, %v, %v; want continued", ok, rec, err)
	}
	if ok, _, err := claim(ctx, b, conv.ID); err != nil || ok {
		t.Fatalf("other replica's claim = %v, %v; want refused", ok, err)
	}
	b.Forward(ctx, conv.ID, nil)
	waitFor(t, ca.pokes, conv.ID, 5*time.Second)
	b.Forward(ctx, conv.ID, &bridges.Action{Key: bridges.ConversationKey(conv.Key), CardID: "card", Choice: "allow", UserID: "u"})
	select {
	case got := <-ca.actions:
		if got.CardID != "card" || got.Choice != "allow" || got.UserID != "u" {
			t.Errorf("forwarded click = %+v", got)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("forwarded click not handled by the holder")
	}
	if len(cb.actions) > 0 || len(cb.pokes) > 0 {
		t.Error("the other replica acted on work it does not hold")
	}

	// Pending work, graceful hand-over: b takes it at once.
	if _, _, err := st.Enqueue(ctx, store.InboxMessage{ConversationID: conv.ID, Bot: "b", PlatformMsgID: "m1", Text: "hi"}); err != nil {
		t.Fatal(err)
	}
	stopA()
	start := time.Now()
	a.Release(ctx)
	waitFor(t, cb.pokes, conv.ID, 5*time.Second)
	if d := time.Since(start); d > lease/2 {
		t.Errorf("hand-over took %s, want well under the lease %s", d, lease)
	}
	if got := b.Held(); len(got) != 1 || got[0] != conv.ID {
		t.Errorf("b holds %v", got)
	}

	if leases, err := st.Leases(ctx, b.ID()); err != nil || len(leases) != 1 {
		t.Fatalf("b's leases: %v, %v", leases, err)
	}
}

// TestExpiredLeaseTaken: the conversations of a replica that stopped
// renewing are taken by another after the lease time, with recover set.
func TestExpiredLeaseTaken(t *testing.T) {
	st := openPG(t)
	ctx := context.Background()
	conv, _, err := st.GetOrCreateConversation(ctx, store.ConversationKey{Bot: "b", Channel: "c", Thread: "t2"}, "coder", "u")
	if err != nil {
		t.Fatal(err)
	}
	const lease = time.Second
	dead, err := New(Options{Store: st, Lease: lease}) // never runs: no renewals
	if err != nil {
		t.Fatal(err)
	}
	if ok, _, err := claim(ctx, dead, conv.ID); !ok || err != nil {
		t.Fatal("claim", ok, err)
	}
	if _, _, err := st.Enqueue(ctx, store.InboxMessage{ConversationID: conv.ID, Bot: "b", PlatformMsgID: "m1", Text: "hi"}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, c, _ := startReplica(t, st, lease)
	waitFor(t, c.pokes, conv.ID, 5*time.Second)
	if d := time.Since(start); d < lease-100*time.Millisecond || d > lease+2*time.Second {
		t.Errorf("taken after %s, want about the lease (%s) plus a poll", d, lease)
	}
	if _, err := st.Leases(ctx, dead.ID()); err != nil {
		t.Fatal(err)
	}
}

// TestSessionFilesRoundTrip: a session's transcripts are saved under the
// lease and restored into another state dir; links the agent planted are
// neither packed nor followed on restore (a link in the way is replaced
// by a directory).
func TestSessionFilesRoundTrip(t *testing.T) {
	st := openPG(t)
	ctx := context.Background()
	r, err := New(Options{Store: st, Lease: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if ok, _, err := claim(ctx, r, "conv-1"); !ok || err != nil {
		t.Fatal("claim", ok, err)
	}
	src := t.TempDir()
	proj := filepath.Join(src, "claude", "projects", "-work-x")
	testkit.Must(t, os.MkdirAll(proj, 0o700))
	testkit.Must(t, os.WriteFile(filepath.Join(proj, "sess.jsonl"), []byte(`{"type":"user"}`+"\n"), 0o600))
	secret := filepath.Join(t.TempDir(), "secret")
	testkit.Must(t, os.WriteFile(secret, []byte("host secret"), 0o600))
	testkit.Must(t, os.Symlink(secret, filepath.Join(proj, "leak.jsonl")))
	r.SaveSession(ctx, "conv-1", "sess", src)

	dst := t.TempDir()
	outside := t.TempDir()
	testkit.Must(t, os.MkdirAll(filepath.Join(dst, "claude"), 0o700))
	testkit.Must(t, os.Symlink(outside, filepath.Join(dst, "claude", "projects"))) // planted: restore must not write through it
	stamp, err := r.RestoreSession(ctx, "conv-1", "sess", dst)
	if err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(outside); len(ents) > 0 {
		t.Fatalf("restore wrote outside the state dir: %v", ents)
	}
	if info, err := os.Lstat(filepath.Join(dst, "claude", "projects")); err != nil || !info.IsDir() {
		t.Errorf("the planted link was not replaced by a directory: %v, %v", info, err)
	}
	b, err := os.ReadFile(filepath.Join(dst, "claude", "projects", "-work-x", "sess.jsonl"))
	if err != nil || string(b) != `{"type":"user"}`+"\n" {
		t.Errorf("restored transcript = %q, %v", b, err)
	}
	if _, err := os.Lstat(filepath.Join(dst, "claude", "projects", "-work-x", "leak.jsonl")); err == nil {
		t.Error("a link was packed")
	}
	if stamp2, err := r.RestoreSession(ctx, "conv-1", "sess", t.TempDir()); err != nil || stamp2 != stamp || stamp == "" {
		t.Errorf("the same stored files restored twice have stamps %q and %q (%v)", stamp, stamp2, err)
	}
	// Another turn stored: the stamp changes.
	testkit.Must(t, os.WriteFile(filepath.Join(proj, "sess.jsonl"), []byte(`{"type":"user"}`+"\n"+`{"type":"assistant"}`+"\n"), 0o600))
	r.SaveSession(ctx, "conv-1", "sess", src)
	if stamp3, err := r.RestoreSession(ctx, "conv-1", "sess", t.TempDir()); err != nil || stamp3 == stamp {
		t.Errorf("after another turn was stored the stamp is still %q (%v)", stamp3, err)
	}
	if stamp, err := r.RestoreSession(ctx, "conv-1", "never-saved", t.TempDir()); err != nil || stamp != "" {
		t.Errorf("restore of a session never saved: stamp %q, %v", stamp, err)
	}
}

// TestLostLeaseDrops: a replica whose conversation lease was taken over
// (it was cut off past the expiry, say) stops the conversation at its
// next renewal, and its fenced session write is refused.
func TestLostLeaseDrops(t *testing.T) {
	st := openPG(t)
	ctx := context.Background()
	const lease = time.Second
	r, c, _ := startReplica(t, st, lease)
	if ok, _, err := claim(ctx, r, "conv-1"); !ok || err != nil {
		t.Fatal("claim", ok, err)
	}
	c.mu.Lock()
	c.live["conv-1"] = true
	c.mu.Unlock()
	l, _ := r.leaseOf("conv-1")
	if err := st.ReleaseLease(ctx, l); err != nil { // as if it expired …
		t.Fatal(err)
	}
	if _, err := st.AcquireLease(ctx, "conversation:conv-1", "intruder", time.Minute); err != nil { // … and was taken
		t.Fatal(err)
	}
	dir := t.TempDir()
	testkit.Must(t, os.MkdirAll(filepath.Join(dir, "claude", "projects", "p"), 0o700))
	testkit.Must(t, os.WriteFile(filepath.Join(dir, "claude", "projects", "p", "s.jsonl"), []byte("stale\n"), 0o600))
	r.SaveSession(ctx, "conv-1", "s", dir)
	if _, err := st.GetSessionState(ctx, "s"); err == nil {
		t.Error("a replica that lost the lease stored session state")
	}
	testkit.WaitUntil(t, "conv-1 stopped after its lease was lost", 5*time.Second, func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		return len(c.dropped) == 1 && c.dropped[0] == "conv-1"
	})
	if got := r.Held(); len(got) != 0 {
		t.Errorf("still holds %v", got)
	}
}

// claim is r.Claim as the test reads it: may it run the conversation, is
// it a new tenure.
func claim(ctx context.Context, r *Replica, id string) (ok, recover bool, err error) {
	t, err := r.Claim(ctx, id)
	return t.OK, t.Recover, err
}

// TestTenureLeaseAndHolding: Claim hands the core the tenure's lease, the
// token the core's writes are fenced by (the same while the tenure goes
// on); Holding says, on the replica's own clock, whether it may still act:
// not for a conversation it never took, nor once the lease ran out
// without a renewal (the replica was paused), before any database
// answers.
func TestTenureLeaseAndHolding(t *testing.T) {
	st := openPG(t)
	ctx := context.Background()
	const lease = 300 * time.Millisecond
	r, err := New(Options{Store: st, Lease: lease})
	if err != nil {
		t.Fatal(err)
	}
	first, err := r.Claim(ctx, "conv-1")
	if err != nil || !first.OK || !first.Recover || first.Lease == nil || first.Lease.Owner != r.ID() {
		t.Fatalf("claim = %+v, %v; want a new tenure with its lease", first, err)
	}
	again, err := r.Claim(ctx, "conv-1")
	if err != nil || !again.OK || again.Recover || again.Lease == nil || again.Lease.Token != first.Lease.Token {
		t.Fatalf("claim again = %+v, %v; want the same tenure and token %d", again, err, first.Lease.Token)
	}
	if !r.Holding("conv-1") || r.Holding("conv-2") {
		t.Errorf("Holding = %v, %v; want true for the claimed conversation only", r.Holding("conv-1"), r.Holding("conv-2"))
	}
	time.Sleep(lease) // not renewed: no Run
	if r.Holding("conv-1") {
		t.Error("Holding after the lease ran out without a renewal = true")
	}
}
