package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/store"
)

// OpenStore opens the database cfg names: the SQLite file in data_dir
// (the default) or the PostgreSQL database of store.dsn. The caller
// closes it.
func OpenStore(ctx context.Context, cfg *config.Config, logger *slog.Logger) (*store.Store, error) {
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

// HoldStore makes this bridge the only one on its database (a PostgreSQL
// database can be reached from other machines, where the data_dir lock
// does not see them); see store.Store.HoldOwner. The caller releases the
// returned owner when it stops.
func HoldStore(ctx context.Context, st *store.Store) (*store.Owner, error) {
	o, err := st.HoldOwner(ctx)
	if errors.Is(err, store.ErrInUse) {
		return nil, fmt.Errorf("%w: stop that bridge first, or give this one a database of its own "+
			"(several bridges on one database need replicas with conversation leases, which this release does not have)", err)
	}
	return o, err
}
