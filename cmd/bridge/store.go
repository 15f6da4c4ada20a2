package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/store"
)

// openStore opens the database cfg names: the SQLite file in data_dir
// (the default) or the PostgreSQL database of store.dsn.
func openStore(ctx context.Context, cfg *config.Config, logger *slog.Logger) (*store.Store, error) {
	if cfg.Store.Driver == config.StorePostgres {
		st, err := store.OpenPostgres(ctx, cfg.Store.DSN, logger)
		if err != nil {
			return nil, err
		}
		logger.Info("store: PostgreSQL", "driver", st.Driver())
		return st, nil
	}
	return store.Open(ctx, cfg.DBPath(), logger)
}

// holdStore makes this bridge the only one on its database (a PostgreSQL
// database can be reached from other machines, where the data_dir lock
// does not see them); see store.HoldOwner.
func holdStore(ctx context.Context, st *store.Store) (*store.Owner, error) {
	o, err := st.HoldOwner(ctx)
	if errors.Is(err, store.ErrInUse) {
		return nil, fmt.Errorf("%w: stop that bridge first, or give this one a database of its own "+
			"(several bridges on one database need replicas with conversation leases, which this release does not have)", err)
	}
	return o, err
}

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
			return storeLocation{}, usagef("-%s: sqlite:// needs a path, e.g. sqlite://data/bridge.db", flagName)
		}
		return storeLocation{store.DriverSQLite, p}, nil
	case strings.HasPrefix(v, "postgres://"), strings.HasPrefix(v, "postgresql://"):
		return storeLocation{store.DriverPostgres, v}, nil
	}
	return storeLocation{}, usagef("-%s: want sqlite://PATH or postgres://USER@HOST/DB", flagName)
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

// cmdMigrateStore copies an installation's database into an empty other:
// typically the SQLite file of data_dir into PostgreSQL before switching
// store.driver. Both are migrated to this binary's schema first. A SQLite
// side's data_dir is locked meanwhile, so a running bridge there is an
// error (stop it first).
func cmdMigrateStore(ctx context.Context, args []string, stdout, stderr io.Writer) (err error) {
	fs := flag.NewFlagSet("migrate-store", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fromFlag := fs.String("from", "", "the database to copy: sqlite://PATH (e.g. sqlite://data/bridge.db) or postgres://…")
	toFlag := fs.String("to", "", "the empty database to fill: postgres://USER@HOST/DB (password from PGPASSWORD or ~/.pgpass) or sqlite://PATH")
	if err := fs.Parse(args); err != nil {
		return usageError{err}
	}
	if fs.NArg() > 0 || *fromFlag == "" || *toFlag == "" {
		return usagef("want -from sqlite://PATH -to postgres://USER@HOST/DB")
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
		return usagef("-from and -to are the same database")
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
		lock, err := lockDataDir(filepath.Dir(l.where)) // owner.go: no bridge may write it meanwhile
		if err != nil {
			return err
		}
		defer func() { err = errors.Join(err, lock.Release()) }()
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
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
