package webstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/agentbridge/agentbridge/store/sqldb"
)

// MinWebSessionKey is the shortest cookie signing key the store keeps
// (table web_session_key).
const MinWebSessionKey = 32

// WebSessionKey returns the web console's cookie signing key shared by
// every bridge on this database (replicas), storing candidate as that key
// when none is stored yet; stored reports that this call stored it. Of
// callers racing with different candidates — replicas starting at once —
// every one gets the key stored first: the row is written with INSERT …
// ON CONFLICT DO NOTHING and read back. A stored key is never replaced.
// candidate must be at least MinWebSessionKey bytes. The key is a secret:
// no error names it.
func (s *Store) WebSessionKey(ctx context.Context, candidate []byte) (key []byte, stored bool, err error) {
	if len(candidate) < MinWebSessionKey {
		return nil, false, fmt.Errorf("web session key: a candidate of at least %d bytes is required: %w", MinWebSessionKey, sqldb.ErrInvalidArgument)
	}
	res, err := s.db.Exec(ctx, false, `INSERT INTO web_session_key (id, secret, created_at) VALUES (1, ?, ?) ON CONFLICT (id) DO NOTHING`,
		candidate, s.db.NowMS())
	if err != nil {
		return nil, false, fmt.Errorf("store the web session key: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return nil, false, fmt.Errorf("store the web session key: %w", err)
	}
	err = s.db.QueryRowContext(ctx, `SELECT secret FROM web_session_key WHERE id = 1`).Scan(&key)
	if errors.Is(err, sql.ErrNoRows) { // deleted between the two statements
		return nil, false, fmt.Errorf("read the web session key: the row was deleted meanwhile: %w", sqldb.ErrNotFound)
	}
	if err != nil {
		return nil, false, fmt.Errorf("read the web session key: %w", err)
	}
	return key, n == 1, nil
}
