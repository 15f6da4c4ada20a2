package bridgetest

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/agentbridge/agentbridge/store"
)

// OpenStore opens a store on a new SQLite database in tb.TempDir(); it
// fails tb when that fails and closes the store when the test ends.
func OpenStore(tb testing.TB) *store.Store {
	tb.Helper()
	st, err := store.Open(context.Background(), filepath.Join(tb.TempDir(), "bridge.db"), nil)
	if err != nil {
		tb.Fatalf("bridgetest: open store: %v", err)
	}
	tb.Cleanup(func() { _ = st.Close() })
	return st
}

// OpenPostgresStore opens a store on the PostgreSQL database dsn (one
// from pgtest; one replica's pool of a database several share); it fails
// tb when that fails and closes the store when the test ends.
func OpenPostgresStore(tb testing.TB, dsn string) *store.Store {
	tb.Helper()
	st, err := store.OpenPostgres(context.Background(), dsn, nil)
	if err != nil {
		tb.Fatalf("bridgetest: open PostgreSQL store: %v", err)
	}
	tb.Cleanup(func() { _ = st.Close() })
	return st
}
