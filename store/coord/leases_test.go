package coord

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/internal/testkit"
	"github.com/agentbridge/agentbridge/store/convstore"
	"github.com/agentbridge/agentbridge/store/internal/storetest"
	"github.com/agentbridge/agentbridge/store/sqldb"
)

// coordinators opens n coordinators of driver on one fresh database at the
// newest schema — n bridges sharing it — and closes them when t ends.
func coordinators(t *testing.T, driver string, n int) []*Coordinator {
	t.Helper()
	ctx := context.Background()
	where := kit.Fresh(t, driver)
	out := make([]*Coordinator, n)
	for i := range out {
		db, err := where.Open(ctx, nil)
		if err != nil {
			t.Fatalf("open %s store %d: %v", driver, i, err)
		}
		t.Cleanup(func() {
			if err := db.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
		})
		out[i] = New(db)
	}
	return out
}

// eachDriver runs f once per driver, as subtests "sqlite" and "postgres".
func eachDriver(t *testing.T, f func(t *testing.T, driver string)) {
	t.Helper()
	for _, d := range storetest.Drivers() {
		t.Run(d, func(t *testing.T) { f(t, d) })
	}
}

// wantHeldBy fails unless err is AcquireLease's refusal naming owner.
func wantHeldBy(t *testing.T, what string, err error, owner string) {
	t.Helper()
	var held *LeaseHeldError
	if !errors.Is(err, ErrLeaseHeld) || !errors.As(err, &held) || held.Holder.Owner != owner {
		t.Fatalf("%s: error = %v, want ErrLeaseHeld naming %s", what, err, owner)
	}
}

// waitExpired waits until owner's leases have all expired on the
// database's clock.
func waitExpired(t *testing.T, s *Coordinator, owner string) {
	t.Helper()
	testkit.WaitUntilSeen(t, "the leases of "+owner+" to expire", 10*time.Second, func() (bool, string) {
		ls, err := s.Leases(context.Background(), owner)
		if err != nil {
			t.Fatal(err)
		}
		return len(ls) == 0, fmt.Sprintf("%+v", ls)
	})
}

// TestLeaseRace: two replicas racing for one lease, again and again — for
// a resource never leased (the INSERT) and for one just released (the
// UPDATE) — exactly one gets it each time, with the next token, and the
// other is told who holds it.
func TestLeaseRace(t *testing.T) {
	eachDriver(t, func(t *testing.T, driver string) {
		ctx := context.Background()
		rs := coordinators(t, driver, 2)
		owners := []string{"replica-a", "replica-b"}
		for round := range 50 {
			resource := fmt.Sprintf("conversation:%d", round)
			for tenure := int64(1); tenure <= 2; tenure++ {
				var wg sync.WaitGroup
				start := make(chan struct{})
				leases := make([]Lease, len(rs))
				errs := make([]error, len(rs))
				for i, s := range rs {
					wg.Go(func() {
						<-start
						leases[i], errs[i] = s.AcquireLease(ctx, resource, owners[i], time.Minute)
					})
				}
				close(start)
				wg.Wait()
				var won []int
				for i, err := range errs {
					if err == nil {
						won = append(won, i)
					}
				}
				if len(won) != 1 {
					t.Fatalf("round %d, tenure %d: %d winners (errors %v), want exactly 1", round, tenure, len(won), errs)
				}
				w := leases[won[0]]
				if w.Token != tenure || w.Owner != owners[won[0]] || w.Resource != resource {
					t.Fatalf("round %d: winner's lease %+v, want token %d", round, w, tenure)
				}
				loser := 1 - won[0]
				wantHeldBy(t, fmt.Sprintf("round %d: loser", round), errs[loser], w.Owner)
				var held *LeaseHeldError
				if errors.As(errs[loser], &held); held.Holder.Token != w.Token {
					t.Fatalf("round %d: refusal names token %d, want %d", round, held.Holder.Token, w.Token)
				}
				if err := rs[won[0]].ReleaseLease(ctx, w); err != nil {
					t.Fatalf("round %d: release: %v", round, err)
				}
			}
		}
	})
}

// TestLeaseExpiryTakeover: a lease that is not renewed is taken over once
// its time has passed, not before, with a higher token; its former holder
// can then neither renew it, nor write under it, nor take it back.
func TestLeaseExpiryTakeover(t *testing.T) {
	eachDriver(t, func(t *testing.T, driver string) {
		ctx := context.Background()
		rs := coordinators(t, driver, 2)
		a, b := rs[0], rs[1]
		const res, ttl = "gateway:discord:team", time.Second
		before := time.Now()
		la, err := a.AcquireLease(ctx, res, "a", ttl)
		if err != nil {
			t.Fatal(err)
		}
		if la.Token != 1 || la.ValidUntil.Before(before.Add(ttl)) || la.ValidUntil.After(time.Now().Add(ttl)) {
			t.Fatalf("lease %+v: want token 1, valid for %v from the call", la, ttl)
		}
		_, err = b.AcquireLease(ctx, res, "b", time.Minute)
		wantHeldBy(t, "acquire a live lease", err, "a")

		lb := storetest.TakeOver(t, b, ErrLeaseHeld, res, "b", time.Minute)
		if took := time.Since(before); took < ttl {
			t.Fatalf("taken over %v after it was granted for %v", took, ttl)
		}
		if lb.Token != la.Token+1 || lb.Owner != "b" {
			t.Fatalf("takeover: %+v, want b with token %d", lb, la.Token+1)
		}
		_, err = a.RenewLease(ctx, la, ttl)
		storetest.WantErrIs(t, "renew after the takeover", err, ErrLeaseLost)
		called := false
		err = a.WithLease(ctx, la, func(*sql.Tx) error { called = true; return nil })
		storetest.WantErrIs(t, "write after the takeover", err, ErrLeaseLost)
		if called {
			t.Fatal("WithLease ran the write of a lost lease")
		}
		_, err = a.AcquireLease(ctx, res, "a", ttl)
		wantHeldBy(t, "take it back", err, "b")
		if ls, err := a.Leases(ctx, "a"); err != nil || len(ls) != 0 {
			t.Fatalf("Leases(a) = %+v, %v; want none", ls, err)
		}
		if ls, err := a.Leases(ctx, "b"); err != nil || len(ls) != 1 || ls[0].Token != lb.Token || !ls[0].ValidUntil.IsZero() {
			t.Fatalf("Leases(b) = %+v, %v; want b's lease", ls, err)
		}
	})
}

// setSession writes conv's session id under lease l (a write the new
// holder of a conversation must not see overwritten).
func setSession(s *Coordinator, l Lease, convID, session string) error {
	return s.WithLease(context.Background(), l, func(tx *sql.Tx) error {
		_, err := tx.Exec(`UPDATE conversations SET session_id = ? WHERE id = ?`, session, convID)
		return err
	})
}

// storedSession reads conv's session id as the database holds it.
func storedSession(t *testing.T, s *Coordinator, convID string) string {
	t.Helper()
	var id string
	if err := s.db.Read().QueryRow(`SELECT session_id FROM conversations WHERE id = ?`, convID).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}

// TestLeaseFencedWrite: after a takeover, a write under the former
// holder's token is refused and leaves the new holder's write in place.
func TestLeaseFencedWrite(t *testing.T) {
	eachDriver(t, func(t *testing.T, driver string) {
		ctx := context.Background()
		rs := coordinators(t, driver, 2)
		a, b := rs[0], rs[1]
		conv := storetest.NewConv(t, convstore.New(a.db), convstore.ConversationKey{Bot: "team", Channel: "C1", Thread: "T1"})
		res := "conversation:" + conv.ID
		la, err := a.AcquireLease(ctx, res, "a", 200*time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		if err := setSession(a, la, conv.ID, "by-a"); err != nil {
			t.Fatalf("write under a live lease: %v", err)
		}
		lb := storetest.TakeOver(t, b, ErrLeaseHeld, res, "b", time.Minute)
		if err := setSession(b, lb, conv.ID, "by-b"); err != nil {
			t.Fatalf("new holder's write: %v", err)
		}
		err = setSession(a, la, conv.ID, "stale")
		storetest.WantErrIs(t, "write with the stale token", err, ErrLeaseLost)
		if got := storedSession(t, b, conv.ID); got != "by-b" {
			t.Fatalf("session id = %q after the stale write, want the new holder's", got)
		}
		err = setSession(a, Lease{Resource: "conversation:never", Owner: "a", Token: 1}, conv.ID, "x")
		storetest.WantErrIs(t, "write under a lease never taken", err, ErrLeaseLost)
	})
}

// TestLeaseTakeoverWaitsForFencedWrite: a takeover that comes while the
// holder's fenced write is in flight waits for its commit, and the new
// holder then sees that write — not the other way round (PostgreSQL: the
// check's FOR SHARE; the lease has expired by then, only its token is
// checked).
func TestLeaseTakeoverWaitsForFencedWrite(t *testing.T) {
	ctx := context.Background()
	rs := coordinators(t, sqldb.DriverPostgres, 2)
	a, b := rs[0], rs[1]
	conv := storetest.NewConv(t, convstore.New(a.db), convstore.ConversationKey{Bot: "team", Channel: "C1", Thread: "T1"})
	res := "conversation:" + conv.ID
	la, err := a.AcquireLease(ctx, res, "a", 100*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	inside, proceed := make(chan struct{}), make(chan struct{})
	written := make(chan error, 1)
	go func() {
		written <- a.WithLease(ctx, la, func(tx *sql.Tx) error {
			close(inside)
			<-proceed
			_, err := tx.Exec(`UPDATE conversations SET session_id = 'by-a' WHERE id = ?`, conv.ID)
			return err
		})
	}()
	<-inside
	waitExpired(t, b, "a")
	type result struct {
		l   Lease
		err error
	}
	took := make(chan result, 1)
	go func() {
		l, err := b.AcquireLease(ctx, res, "b", time.Minute)
		took <- result{l, err}
	}()
	// The takeover must now wait on the lease row's lock.
	testkit.WaitUntil(t, "the takeover to wait for the lease row's lock", 10*time.Second, func() bool {
		select {
		case r := <-took:
			close(proceed)
			<-written
			t.Fatalf("takeover returned (%+v, %v) while the holder's fenced write was in flight", r.l, r.err)
		default:
		}
		return storetest.CountRows(t, b.db.Read(), `SELECT COUNT(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE 'INSERT INTO leases%'`) > 0
	})
	close(proceed)
	if err := <-written; err != nil {
		t.Fatalf("fenced write: %v", err)
	}
	r := <-took
	if r.err != nil || r.l.Token != la.Token+1 {
		t.Fatalf("takeover after the write: %+v, %v; want token %d", r.l, r.err, la.Token+1)
	}
	if got := storedSession(t, b, conv.ID); got != "by-a" {
		t.Fatalf("new holder reads session id %q, want the write committed before it took over", got)
	}
}

// TestLeaseReleaseHandover: a released lease is taken at once by another
// owner, with the next token; the release cannot be repeated, and the old
// tenure cannot be renewed.
func TestLeaseReleaseHandover(t *testing.T) {
	eachDriver(t, func(t *testing.T, driver string) {
		ctx := context.Background()
		rs := coordinators(t, driver, 2)
		a, b := rs[0], rs[1]
		const res = "device:whatsapp:phone"
		la, err := a.AcquireLease(ctx, res, "a", time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		if err := a.ReleaseLease(ctx, la); err != nil {
			t.Fatalf("release: %v", err)
		}
		lb, err := b.AcquireLease(ctx, res, "b", time.Hour)
		if err != nil || lb.Token != la.Token+1 {
			t.Fatalf("acquire right after the release: %+v, %v; want token %d", lb, err, la.Token+1)
		}
		storetest.WantErrIs(t, "second release", a.ReleaseLease(ctx, la), ErrLeaseLost)
		_, err = a.RenewLease(ctx, la, time.Hour)
		storetest.WantErrIs(t, "renew after the release", err, ErrLeaseLost)
		if ls, err := a.Leases(ctx, ""); err != nil || len(ls) != 1 || ls[0].Owner != "b" {
			t.Fatalf("Leases() = %+v, %v; want b's only", ls, err)
		}
		if err := b.ReleaseLease(ctx, lb); err != nil {
			t.Fatal(err)
		}
		if ls, err := a.Leases(ctx, ""); err != nil || len(ls) != 0 {
			t.Fatalf("Leases() after both released = %+v, %v; want none", ls, err)
		}
		back, err := a.AcquireLease(ctx, res, "a", time.Hour)
		if err != nil || back.Token != lb.Token+1 {
			t.Fatalf("hand back: %+v, %v; want token %d", back, err, lb.Token+1)
		}
	})
}

// TestLeaseRenew: the holder renews (same token, later expiry) — also
// after an expiry nobody used; nobody else can, nor the holder with
// another token; re-acquiring continues a live tenure and starts a new
// one after an expiry.
func TestLeaseRenew(t *testing.T) {
	kit.Each(t, func(t *testing.T, s *Coordinator) {
		ctx := context.Background()
		la, err := s.AcquireLease(ctx, "conversation:1", "a", time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		renewed, err := s.RenewLease(ctx, la, time.Hour)
		if err != nil || renewed.Token != la.Token || !renewed.ExpiresAt.After(la.ExpiresAt) ||
			!renewed.AcquiredAt.Equal(la.AcquiredAt) || !renewed.ValidUntil.After(la.ValidUntil) {
			t.Fatalf("renew: %+v, %v; want the same tenure, later", renewed, err)
		}
		for name, l := range map[string]Lease{
			"another owner": {Resource: la.Resource, Owner: "b", Token: la.Token},
			"another token": {Resource: la.Resource, Owner: "a", Token: la.Token + 1},
		} {
			_, err := s.RenewLease(ctx, l, 2*time.Hour)
			storetest.WantErrIs(t, "renew by "+name, err, ErrLeaseLost)
		}
		if ls, err := s.Leases(ctx, "a"); err != nil || len(ls) != 1 || !ls[0].ExpiresAt.Equal(renewed.ExpiresAt) {
			t.Fatalf("Leases(a) = %+v, %v; want the expiry of the holder's renewal", ls, err)
		}
		again, err := s.AcquireLease(ctx, "conversation:1", "a", time.Hour)
		if err != nil || again.Token != la.Token || !again.AcquiredAt.Equal(la.AcquiredAt) {
			t.Fatalf("acquire a lease already held: %+v, %v; want the same tenure", again, err)
		}

		short, err := s.AcquireLease(ctx, "conversation:2", "c", time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		waitExpired(t, s, "c")
		if r, err := s.RenewLease(ctx, short, time.Hour); err != nil || r.Token != short.Token {
			t.Fatalf("renew an expired lease nobody took: %+v, %v; want it renewed", r, err)
		}
		short, err = s.AcquireLease(ctx, "conversation:3", "d", time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		waitExpired(t, s, "d")
		if r, err := s.AcquireLease(ctx, "conversation:3", "d", time.Hour); err != nil || r.Token != short.Token+1 {
			t.Fatalf("acquire after one's own expiry: %+v, %v; want a new tenure", r, err)
		}
	})
}

// TestLeaseDatabaseClock: expiry is decided on the database's clock — a
// replica whose clock runs an hour ahead cannot take a live lease — while
// ValidUntil is on the replica's own.
func TestLeaseDatabaseClock(t *testing.T) {
	eachDriver(t, func(t *testing.T, driver string) {
		ctx := context.Background()
		rs := coordinators(t, driver, 2)
		a, fast := rs[0], rs[1]
		ahead := func() time.Time { return time.Now().Add(time.Hour) }
		fast.db.SetClock(ahead)
		if _, err := a.AcquireLease(ctx, "conversation:1", "a", time.Minute); err != nil {
			t.Fatal(err)
		}
		_, err := fast.AcquireLease(ctx, "conversation:1", "fast", time.Minute)
		wantHeldBy(t, "acquire with a clock an hour ahead", err, "a")
		l, err := fast.AcquireLease(ctx, "conversation:2", "fast", time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if d := l.ValidUntil.Sub(ahead()); d > time.Minute || d < 50*time.Second {
			t.Fatalf("ValidUntil %v from the replica's clock, want about a minute", d)
		}
		if d := time.Until(l.ExpiresAt); d > time.Minute+time.Second || d < 50*time.Second {
			t.Fatalf("ExpiresAt in %v, want about a minute on the database's clock", d)
		}
	})
}

// TestLeaseArguments: empty names and lease times under a millisecond are
// refused.
func TestLeaseArguments(t *testing.T) {
	s := kit.Open(t, sqldb.DriverSQLite)
	ctx := context.Background()
	for _, tt := range []struct {
		resource, owner string
		ttl             time.Duration
	}{{"", "a", time.Second}, {"r", "", time.Second}, {"r", "a", 0}, {"r", "a", time.Microsecond}} {
		_, err := s.AcquireLease(ctx, tt.resource, tt.owner, tt.ttl)
		storetest.WantErrIs(t, fmt.Sprintf("AcquireLease(%q, %q, %v)", tt.resource, tt.owner, tt.ttl), err, sqldb.ErrInvalidArgument)
		_, err = s.RenewLease(ctx, Lease{Resource: tt.resource, Owner: tt.owner, Token: 1}, tt.ttl)
		storetest.WantErrIs(t, fmt.Sprintf("RenewLease(%q, %q, %v)", tt.resource, tt.owner, tt.ttl), err, sqldb.ErrInvalidArgument)
	}
}
