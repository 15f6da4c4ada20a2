package webstore

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/agentbridge/agentbridge/store/sqldb"
)

// WebSession is a signed-in web console session (table web_sessions). The
// web console decides what ID and TokenFP hold; the store only keeps them.
type WebSession struct {
	ID      []byte // SHA-256 of the secret the session cookie names
	User    string
	TokenFP []byte // fingerprint of the user's token when the session began
	Created time.Time
	Expires time.Time
}

// AddWebSession records ws and, in the same transaction, deletes the
// sessions that expired before ws.Created and the user's oldest sessions
// beyond the newest keepPerUser (ws included, and always kept: of two
// others created in the same millisecond the one with the greater id
// stays), so that the table stays bounded however often a person signs in.
func (s *Store) AddWebSession(ctx context.Context, ws WebSession, keepPerUser int) error {
	if len(ws.ID) == 0 || ws.User == "" || keepPerUser < 1 {
		return fmt.Errorf("add web session: id, user and a positive keepPerUser are required: %w", sqldb.ErrInvalidArgument)
	}
	return s.db.WithTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM web_sessions WHERE expires_at <= ?`, ws.Created.UnixMilli()); err != nil {
			return fmt.Errorf("add web session: delete expired: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO web_sessions (id, "user", token_fp, created_at, expires_at) VALUES (?, ?, ?, ?, ?)`,
			ws.ID, ws.User, ws.TokenFP, ws.Created.UnixMilli(), ws.Expires.UnixMilli()); err != nil {
			return fmt.Errorf("add web session for %s: %w", ws.User, sqldb.InsertErr(err))
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM web_sessions WHERE "user" = ? AND id <> ? AND id NOT IN
			(SELECT id FROM web_sessions WHERE "user" = ? AND id <> ? ORDER BY created_at DESC, id DESC LIMIT ?)`,
			ws.User, ws.ID, ws.User, ws.ID, keepPerUser-1); err != nil {
			return fmt.Errorf("add web session: delete %s's oldest: %w", ws.User, err)
		}
		return nil
	})
}

// WebSession returns the session with id, or an error wrapping sqldb.ErrNotFound.
func (s *Store) WebSession(ctx context.Context, id []byte) (WebSession, error) {
	var ws WebSession
	var created, expires int64
	err := s.db.QueryRowContext(ctx, `SELECT id, "user", token_fp, created_at, expires_at FROM web_sessions WHERE id = ?`, id).
		Scan(&ws.ID, &ws.User, &ws.TokenFP, &created, &expires)
	if errors.Is(err, sql.ErrNoRows) {
		return WebSession{}, fmt.Errorf("web session: %w", sqldb.ErrNotFound)
	}
	if err != nil {
		return WebSession{}, fmt.Errorf("get web session: %w", err)
	}
	ws.Created, ws.Expires = sqldb.FromMS(created), sqldb.FromMS(expires)
	return ws, nil
}

// AnyWebSession reports whether anybody is signed in to the web console
// (a session exists that has not expired).
func (s *Store) AnyWebSession(ctx context.Context) (bool, error) {
	var n int
	err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM web_sessions WHERE expires_at > ?`, s.db.NowMS()).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("count web sessions: %w", err)
	}
	return n > 0, nil
}

// DeleteWebSession ends the session with id (no error when there is none).
func (s *Store) DeleteWebSession(ctx context.Context, id []byte) error {
	if _, err := s.db.Exec(ctx, false, `DELETE FROM web_sessions WHERE id = ?`, id); err != nil {
		return fmt.Errorf("delete web session: %w", err)
	}
	return nil
}

// KeepWebSessions deletes every session whose user is not in current or
// whose token fingerprint differs from current[user], and returns how many
// it deleted: a user removed from the config, or given a new token, loses
// all their sessions, even if the old token comes back later.
func (s *Store) KeepWebSessions(ctx context.Context, current map[string][]byte) (int, error) {
	n := 0
	err := s.db.WithTx(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT id, "user", token_fp FROM web_sessions`)
		if err != nil {
			return fmt.Errorf("list web sessions: %w", err)
		}
		var stale [][]byte
		for rows.Next() {
			var id, fp []byte
			var user string
			if err := rows.Scan(&id, &user, &fp); err != nil {
				rows.Close()
				return fmt.Errorf("list web sessions: %w", err)
			}
			if want, ok := current[user]; !ok || !bytes.Equal(fp, want) {
				stale = append(stale, id)
			}
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			return fmt.Errorf("list web sessions: %w", err)
		}
		for _, id := range stale {
			if _, err := tx.ExecContext(ctx, `DELETE FROM web_sessions WHERE id = ?`, id); err != nil {
				return fmt.Errorf("delete a stale web session: %w", err)
			}
		}
		n = len(stale)
		return nil
	})
	return n, err
}
