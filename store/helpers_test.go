package store

import (
	"context"
	"os"
	"testing"

	"github.com/agentbridge/agentbridge/migrations"
	"github.com/agentbridge/agentbridge/store/internal/storetest"
)

// kit runs every test on SQLite and PostgreSQL, each on a fresh Store
// (storetest). Without PostgreSQL the postgres subtests are skipped, or
// fail under CI.
var kit = storetest.Kit[*Store]{New: compose}

func TestMain(m *testing.M) { os.Exit(kit.Run(m)) }

// open opens db migrated with ms as a Store, or with Open or OpenPostgres
// when ms is nil (every embedded migration); the caller closes it.
func open(ctx context.Context, db storetest.DB, ms []migrations.Migration) (*Store, error) {
	switch {
	case ms == nil && db.Driver == DriverPostgres:
		return OpenPostgres(ctx, db.Where, nil)
	case ms == nil:
		return Open(ctx, db.Where, nil)
	}
	return kit.OpenDB(ctx, db, ms)
}
