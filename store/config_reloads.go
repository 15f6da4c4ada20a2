package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/agentbridge/agentbridge/store/sqldb"
)

// ConfigReload is one audited reload attempt of the config (table
// config_reloads). Changed and Problems name config keys and describe
// problems; they never hold values (secrets stay out).
type ConfigReload struct {
	At         time.Time
	Trigger    string // signal, file, request
	Generation uint64 // the generation it made; 0 when refused
	Applied    bool
	Changed    []string // key paths, e.g. "bots[team].access.users"
	Problems   []string // why it was refused, one line each
}

// AddConfigReload records r.
func (s *Store) AddConfigReload(ctx context.Context, r ConfigReload) error {
	if r.Trigger == "" {
		return fmt.Errorf("add config reload: trigger is required: %w", ErrInvalidArgument)
	}
	_, err := s.db.Read().ExecContext(ctx, `INSERT INTO config_reloads (at, via, generation, applied, changed, problems) VALUES (?, ?, ?, ?, ?, ?)`,
		r.At.UnixMilli(), r.Trigger, int64(r.Generation), r.Applied, strings.Join(r.Changed, "\n"), strings.Join(r.Problems, "\n"))
	if err != nil {
		return fmt.Errorf("add config reload: %w", err)
	}
	return nil
}

// ConfigReloads returns the newest limit reload attempts, newest first.
func (s *Store) ConfigReloads(ctx context.Context, limit int) ([]ConfigReload, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT at, via, generation, applied, changed, problems FROM config_reloads ORDER BY seq DESC LIMIT ?`, limit)
	if err != nil {
		return nil, fmt.Errorf("config reloads: %w", err)
	}
	defer rows.Close()
	var out []ConfigReload
	for rows.Next() {
		var r ConfigReload
		var at, gen int64
		var changed, problems string
		if err := rows.Scan(&at, &r.Trigger, &gen, &r.Applied, &changed, &problems); err != nil {
			return nil, fmt.Errorf("config reloads: %w", err)
		}
		r.At, r.Generation = sqldb.FromMS(at), uint64(gen)
		r.Changed, r.Problems = lines(changed), lines(problems)
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("config reloads: %w", err)
	}
	return out, nil
}

func lines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}
