package coord

import (
	"context"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/store/convstore"
	"github.com/agentbridge/agentbridge/store/internal/storetest"
)

// TestLeaseRenewFromNow: each renewal's expiry is ttl from the database's
// clock at the renewal — shorter or longer than what is left, never added
// to the old expiry nor kept when later — across several renewals; the
// tenure (token, start) stays. The test's clock reads the same clock as
// the database (SQLite in process, PostgreSQL on this host), and the ttls
// differ by minutes while the slack is seconds.
func TestLeaseRenewFromNow(t *testing.T) {
	eachDriver(t, func(t *testing.T, driver string) {
		ctx := context.Background()
		s := coordinators(t, driver, 1)[0]
		l, err := s.AcquireLease(ctx, "conversation:1", "a", time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		first := l
		const slack = 5 * time.Second
		for i, ttl := range []time.Duration{time.Minute, 3 * time.Minute, 30 * time.Second, 2 * time.Hour, 10 * time.Second, 5 * time.Minute} {
			before := time.Now()
			r, err := s.RenewLease(ctx, l, ttl)
			after := time.Now()
			if err != nil {
				t.Fatalf("renewal %d: %v", i, err)
			}
			if r.ExpiresAt.Before(before.Add(ttl-slack)) || r.ExpiresAt.After(after.Add(ttl+slack)) {
				t.Fatalf("renewal %d for %v: expires %v from now, want %v (from the database's clock now, not the old expiry %v)",
					i, ttl, time.Until(r.ExpiresAt).Round(time.Second), ttl, l.ExpiresAt)
			}
			if r.ValidUntil.Before(before.Add(ttl)) || r.ValidUntil.After(after.Add(ttl)) {
				t.Fatalf("renewal %d for %v: valid until %v from now", i, ttl, time.Until(r.ValidUntil))
			}
			if r.Token != first.Token || !r.AcquiredAt.Equal(first.AcquiredAt) || r.Owner != "a" {
				t.Fatalf("renewal %d: %+v, want the tenure of %+v", i, r, first)
			}
			ls, err := s.Leases(ctx, "a")
			if err != nil || len(ls) != 1 || !ls[0].ExpiresAt.Equal(r.ExpiresAt) {
				t.Fatalf("renewal %d: Leases = %+v, %v; want the renewed expiry %v", i, ls, err, r.ExpiresAt)
			}
			l = r
		}
		// The first tenure's lease, once renewed, is still the one held:
		// renewing with it (same token) works, with another token does not.
		stale := l
		stale.Token++
		_, err = s.RenewLease(ctx, stale, time.Minute)
		storetest.WantErrIs(t, "renew with a token never granted", err, ErrLeaseLost)
	})
}

// TestFenceChecksToken: the same replica that released its lease and took
// it again writes with its new token only; the write, renewal and release
// of its earlier tenure are refused although the owner is the same.
func TestFenceChecksToken(t *testing.T) {
	eachDriver(t, func(t *testing.T, driver string) {
		ctx := context.Background()
		rs := coordinators(t, driver, 1)
		a := rs[0]
		conv := storetest.NewConv(t, convstoreOf(a), convKey("T1"))
		res := "conversation:" + conv.ID
		var tenures []Lease
		for i := 0; i < 3; i++ {
			l, err := a.AcquireLease(ctx, res, "a", time.Hour)
			if err != nil {
				t.Fatal(err)
			}
			tenures = append(tenures, l)
			if err := setSession(a, l, conv.ID, "current"); err != nil {
				t.Fatalf("tenure %d: write with the current token: %v", i, err)
			}
			for j, old := range tenures[:i] {
				err := setSession(a, old, conv.ID, "stale")
				storetest.WantErrIs(t, "write of the same owner's earlier tenure", err, ErrFenced)
				_, err = a.RenewLease(ctx, old, time.Minute)
				storetest.WantErrIs(t, "renewal of the same owner's earlier tenure", err, ErrLeaseLost)
				err = a.ReleaseLease(ctx, old)
				storetest.WantErrIs(t, "release of the same owner's earlier tenure", err, ErrLeaseLost)
				if got := storedSession(t, a, conv.ID); got != "current" {
					t.Fatalf("tenure %d: session %q after the write of tenure %d", i, got, j)
				}
			}
			if err := a.ReleaseLease(ctx, l); err != nil {
				t.Fatal(err)
			}
		}
	})
}

func convstoreOf(s *Coordinator) *convstore.Store { return convstore.New(s.db) }

func convKey(thread string) convstore.ConversationKey {
	return convstore.ConversationKey{Bot: "team", Channel: "C1", Thread: thread}
}
