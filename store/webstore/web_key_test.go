package webstore

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"sync"
	"testing"

	"github.com/agentbridge/agentbridge/store/internal/storetest"
	"github.com/agentbridge/agentbridge/store/sqldb"
)

// randomKey returns n random bytes.
func randomKey(n int) []byte {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return b
}

// TestWebSessionKey: the first candidate becomes the key; a later one —
// a replica whose key file differs — gets the stored key and changes
// nothing; a short candidate is refused and stores nothing.
func TestWebSessionKey(t *testing.T) {
	ctx := context.Background()
	kit.Each(t, func(t *testing.T, s *Store) {
		if _, _, err := s.WebSessionKey(ctx, randomKey(MinWebSessionKey-1)); !errors.Is(err, sqldb.ErrInvalidArgument) {
			t.Fatalf("a 31-byte candidate: err = %v, want ErrInvalidArgument", err)
		}
		first, later := randomKey(32), randomKey(48)
		got, stored, err := s.WebSessionKey(ctx, first)
		if err != nil || !stored || !bytes.Equal(got, first) {
			t.Fatalf("first call = stored %v, same key %v, %v; want the candidate stored", stored, bytes.Equal(got, first), err)
		}
		for range 2 {
			got, stored, err = s.WebSessionKey(ctx, later)
			if err != nil || stored || !bytes.Equal(got, first) {
				t.Fatalf("later call = stored %v, the first key %v, %v; want the first key, nothing stored", stored, bytes.Equal(got, first), err)
			}
		}
	})
}

// TestWebSessionKeyRace: bridges on one database (replicas starting at
// once), each with a store of its own and a candidate of its own, all get
// the same key, stored by exactly one of them.
func TestWebSessionKeyRace(t *testing.T) {
	const n = 8
	ctx := context.Background()
	for _, driver := range storetest.Drivers() {
		t.Run(driver, func(t *testing.T) {
			where := kit.Fresh(t, driver)
			stores := make([]*Store, n)
			for i := range stores {
				db, err := where.Open(ctx, nil)
				if err != nil {
					t.Fatalf("open %s store %d: %v", driver, i, err)
				}
				t.Cleanup(func() { db.Close() })
				stores[i] = New(db)
			}
			type result struct {
				candidate, key []byte
				stored         bool
				err            error
			}
			results := make([]result, n)
			start := make(chan struct{})
			var wg sync.WaitGroup
			for i, s := range stores {
				results[i].candidate = randomKey(32)
				wg.Go(func() {
					<-start
					results[i].key, results[i].stored, results[i].err = s.WebSessionKey(ctx, results[i].candidate)
				})
			}
			close(start)
			wg.Wait()
			var winner []byte
			for i, r := range results {
				if r.err != nil {
					t.Fatalf("store %d: %v", i, r.err)
				}
				if r.stored {
					if winner != nil {
						t.Fatalf("two stores report that they stored the key")
					}
					winner = r.candidate
				}
			}
			if winner == nil {
				t.Fatal("no store reports that it stored the key")
			}
			for i, r := range results {
				if !bytes.Equal(r.key, winner) {
					t.Errorf("store %d got another key than the one stored", i)
				}
			}
		})
	}
}
