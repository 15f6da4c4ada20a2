package webstore

import (
	"os"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/store/internal/storetest"
	"github.com/agentbridge/agentbridge/store/sqldb"
)

// kit runs every test on SQLite and PostgreSQL (storetest).
var kit storetest.Kit

func TestMain(m *testing.M) { os.Exit(kit.Run(m)) }

// eachStore runs f once per driver, as subtests "sqlite" and "postgres",
// each with a fresh store at the newest schema (closed when f's test ends).
func eachStore(t *testing.T, f func(t *testing.T, s *Store)) {
	t.Helper()
	kit.Each(t, func(t *testing.T, db *sqldb.DB) { f(t, New(db)) })
}

// useClock makes s stamp rows with a storetest.Clock starting at start.
func useClock(s *Store, start time.Time, step time.Duration) *storetest.Clock {
	return storetest.UseClock(s.db, start, step)
}
