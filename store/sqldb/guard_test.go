package sqldb

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"testing"

	"github.com/agentbridge/agentbridge/migrations"
)

// TestGuarded: a guarded handle runs its guard in every write — WithTx
// before fn, Exec in a transaction with its statement — and a refusal
// commits nothing; Write, which hands out the writer connection, refuses
// rather than write unguarded; reads and the unguarded handle are as
// before.
func TestGuarded(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "bridge.db"), Options{Migrations: []migrations.Migration{}})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(ctx, false, `CREATE TABLE t (v INTEGER)`); err != nil {
		t.Fatal(err)
	}
	errNo := errors.New("refused")
	allow, checks := true, 0
	g := db.Guarded(func(ctx context.Context, tx *sql.Tx) error {
		checks++
		var one int
		if err := tx.QueryRowContext(ctx, `SELECT 1`).Scan(&one); err != nil {
			return err
		}
		if !allow {
			return errNo
		}
		return nil
	})
	insert := func(tx *sql.Tx) error { _, err := tx.ExecContext(ctx, `INSERT INTO t (v) VALUES (1)`); return err }
	if err := g.WithTx(ctx, insert); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Exec(ctx, false, `INSERT INTO t (v) VALUES (2)`); err != nil {
		t.Fatal(err)
	}
	allow = false
	if err := g.WithTx(ctx, insert); !errors.Is(err, errNo) {
		t.Errorf("refused WithTx = %v", err)
	}
	if _, err := g.Exec(ctx, true, `INSERT INTO t (v) VALUES (3)`); !errors.Is(err, errNo) {
		t.Errorf("refused Exec = %v", err)
	}
	if err := g.Write(ctx, false, func(*sql.DB) error { return nil }); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("Write on a guarded handle = %v, want ErrInvalidArgument", err)
	}
	if _, err := db.Exec(ctx, false, `INSERT INTO t (v) VALUES (4)`); err != nil {
		t.Errorf("unguarded Exec: %v", err)
	}
	var n, sum int
	if err := g.QueryRowContext(ctx, `SELECT COUNT(*), SUM(v) FROM t`).Scan(&n, &sum); err != nil || n != 3 || sum != 7 {
		t.Errorf("rows = %d (sum %d), %v; want 1, 2 and 4", n, sum, err)
	}
	if checks != 4 {
		t.Errorf("the guard ran %d times, want once per guarded write (4)", checks)
	}
}
