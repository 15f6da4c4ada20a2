package storecmd

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/internal/dirlock"
	"github.com/agentbridge/agentbridge/store"
)

// Open opens the database cfg names: the SQLite file in data_dir (the
// default) or the PostgreSQL database of store.dsn.
func Open(ctx context.Context, cfg *config.Config, logger *slog.Logger) (*store.Store, error) {
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

// Hold makes this bridge the only one on its database (a PostgreSQL
// database can be reached from other machines, where the data_dir lock
// does not see them); see store.HoldOwner.
func Hold(ctx context.Context, st *store.Store) (*store.Owner, error) {
	o, err := st.HoldOwner(ctx)
	if errors.Is(err, store.ErrInUse) {
		return nil, fmt.Errorf("%w: stop that bridge first, or give this one a database of its own "+
			"(several bridges on one database need replicas with conversation leases, which this release does not have)", err)
	}
	return o, err
}

// LockDataDir makes this bridge the only owner of data_dir for its
// lifetime (the caller releases the lock when it stops; the kernel does if
// it is killed). Another bridge there is an error naming its pid and what
// to do: two bridges on one directory would recover, expire and answer
// each other's messages and approvals.
func LockDataDir(dir string) (*dirlock.Lock, error) {
	l, err := dirlock.Acquire(dir)
	var held *dirlock.HeldError
	switch {
	case errors.As(err, &held) && held.PID > 0:
		return nil, fmt.Errorf("data_dir %s is in use by another bridge (pid %d): stop that one first (kill -TERM %d), "+
			"or give this one a data_dir of its own", dir, held.PID, held.PID)
	case errors.As(err, &held):
		return nil, fmt.Errorf("data_dir %s is in use by another bridge (its pid could not be read from %s): stop that one first, "+
			"or give this one a data_dir of its own", dir, dirlock.FileName)
	case err != nil:
		return nil, fmt.Errorf("lock data_dir: %w", err)
	}
	return l, nil
}
