// Package storecmd holds `bridge migrate-store`, and how every command
// opens the store a config names and becomes its only user: the data_dir
// lock (LockDataDir) and the database's owner row (Hold).
package storecmd

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentbridge/agentbridge/cmd/bridge/internal/cli"
	"github.com/agentbridge/agentbridge/store"
)

// storeLocation is one side of migrate-store: sqlite://PATH or a
// postgres:// (postgresql://) URL.
type storeLocation struct {
	driver string // store.DriverSQLite or store.DriverPostgres
	where  string // the file path, or the DSN (secret: show with String)
}

// parseStoreLocation reads a -from or -to value.
func parseStoreLocation(flagName, v string) (storeLocation, error) {
	switch {
	case strings.HasPrefix(v, "sqlite://"):
		p := strings.TrimPrefix(v, "sqlite://")
		if p == "" {
			return storeLocation{}, cli.Usagef("-%s: sqlite:// needs a path, e.g. sqlite://data/bridge.db", flagName)
		}
		return storeLocation{store.DriverSQLite, p}, nil
	case strings.HasPrefix(v, "postgres://"), strings.HasPrefix(v, "postgresql://"):
		return storeLocation{store.DriverPostgres, v}, nil
	}
	return storeLocation{}, cli.Usagef("-%s: want sqlite://PATH or postgres://USER@HOST/DB", flagName)
}

// String shows the location without a password.
func (l storeLocation) String() string {
	if l.driver == store.DriverSQLite {
		return "sqlite://" + l.where
	}
	u, err := url.Parse(l.where)
	if err != nil {
		return "postgres://<unparsable>"
	}
	return u.Redacted()
}

// open opens the store at l.
func (l storeLocation) open(ctx context.Context, logger *slog.Logger) (*store.Store, error) {
	if l.driver == store.DriverPostgres {
		return store.OpenPostgres(ctx, l.where, logger)
	}
	return store.Open(ctx, l.where, logger)
}

// MigrateStore runs `bridge migrate-store -from sqlite://PATH -to
// postgres://USER@HOST/DB`: it copies an installation's database into an
// empty other:
// typically the SQLite file of data_dir into PostgreSQL before switching
// store.driver. Both are migrated to this binary's schema first. A SQLite
// side's data_dir is locked meanwhile, so a running bridge there is an
// error (stop it first).
func MigrateStore(ctx context.Context, args []string, env cli.Env) (err error) {
	stdout := env.Stdout
	fs := flag.NewFlagSet("migrate-store", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	fromFlag := fs.String("from", "", "the database to copy: sqlite://PATH (e.g. sqlite://data/bridge.db) or postgres://…")
	toFlag := fs.String("to", "", "the empty database to fill: postgres://USER@HOST/DB (password from PGPASSWORD or ~/.pgpass) or sqlite://PATH")
	if err := fs.Parse(args); err != nil {
		return cli.UsageError{Err: err}
	}
	if fs.NArg() > 0 || *fromFlag == "" || *toFlag == "" {
		return cli.Usagef("want -from sqlite://PATH -to postgres://USER@HOST/DB")
	}
	from, err := parseStoreLocation("from", *fromFlag)
	if err != nil {
		return err
	}
	to, err := parseStoreLocation("to", *toFlag)
	if err != nil {
		return err
	}
	if from == to {
		return cli.Usagef("-from and -to are the same database")
	}
	if from.driver == store.DriverSQLite {
		if _, err := os.Stat(from.where); err != nil { // store.Open would create an empty one
			return fmt.Errorf("no database at %s: %w", from.where, err)
		}
	}
	for _, l := range []storeLocation{from, to} {
		if l.driver != store.DriverSQLite {
			continue
		}
		lock, err := LockDataDir(filepath.Dir(l.where)) // no bridge may write it meanwhile
		if err != nil {
			return err
		}
		defer func() { err = errors.Join(err, lock.Release()) }()
	}
	logger := slog.New(slog.NewTextHandler(env.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	src, err := from.open(ctx, logger)
	if err != nil {
		return fmt.Errorf("open %s: %w", from, err)
	}
	defer src.Close()
	dst, err := to.open(ctx, logger)
	if err != nil {
		return fmt.Errorf("open %s: %w", to, err)
	}
	defer dst.Close()
	counts, err := store.Copy(ctx, src, dst)
	if errors.Is(err, store.ErrTargetNotEmpty) {
		return fmt.Errorf("%s already holds data; migrate-store only fills an empty database (nothing was copied): %w", to, err)
	}
	if err != nil {
		return fmt.Errorf("nothing was copied: %w", err)
	}
	var total int64
	width := 0
	for _, c := range counts {
		width = max(width, len(c.Table))
	}
	fmt.Fprintf(stdout, "copied %s to %s:\n", from, to)
	for _, c := range counts {
		fmt.Fprintf(stdout, "  %-*s %d\n", width, c.Table, c.Rows)
		total += c.Rows
	}
	fmt.Fprintf(stdout, "%d rows in %d tables\n", total, len(counts))
	return nil
}
