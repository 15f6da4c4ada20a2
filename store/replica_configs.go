package store

import (
	"context"
	"fmt"
	"time"

	"github.com/agentbridge/agentbridge/store/sqldb"
)

// ReplicaConfig is the config one bridge process on this database runs
// (table replica_configs): the hash of its config file and the generation
// in force. Processes sharing a database compare them to notice a replica
// whose file differs.
type ReplicaConfig struct {
	Replica    string    // the process's replica id
	FileHash   string    // hex SHA-256 of its config file
	Generation uint64    // its config generation in force
	AppliedAt  time.Time // when that generation took effect
	SeenAt     time.Time // its last heartbeat
}

// RecordReplicaConfig records (or replaces) rc as its replica's row.
func (s *Store) RecordReplicaConfig(ctx context.Context, rc ReplicaConfig) error {
	if rc.Replica == "" || rc.FileHash == "" {
		return fmt.Errorf("record replica config: replica and file hash are required: %w", ErrInvalidArgument)
	}
	_, err := s.db.Exec(ctx, false, `INSERT INTO replica_configs (replica, file_hash, generation, applied_at, seen_at)
		VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (replica) DO UPDATE SET file_hash = excluded.file_hash, generation = excluded.generation,
			applied_at = excluded.applied_at, seen_at = excluded.seen_at`,
		rc.Replica, rc.FileHash, int64(rc.Generation), rc.AppliedAt.UnixMilli(), rc.SeenAt.UnixMilli())
	if err != nil {
		return fmt.Errorf("record replica config of %s: %w", rc.Replica, err)
	}
	return nil
}

// ReplicaConfigs returns the rows seen at or after since (the live
// processes), by replica id.
func (s *Store) ReplicaConfigs(ctx context.Context, since time.Time) ([]ReplicaConfig, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT replica, file_hash, generation, applied_at, seen_at FROM replica_configs
		WHERE seen_at >= ? ORDER BY replica`, since.UnixMilli())
	if err != nil {
		return nil, fmt.Errorf("replica configs: %w", err)
	}
	defer rows.Close()
	var out []ReplicaConfig
	for rows.Next() {
		var rc ReplicaConfig
		var gen, applied, seen int64
		if err := rows.Scan(&rc.Replica, &rc.FileHash, &gen, &applied, &seen); err != nil {
			return nil, fmt.Errorf("replica configs: %w", err)
		}
		rc.Generation, rc.AppliedAt, rc.SeenAt = uint64(gen), sqldb.FromMS(applied), sqldb.FromMS(seen)
		out = append(out, rc)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("replica configs: %w", err)
	}
	return out, nil
}

// RemoveReplicaConfig removes replica's row (the process stops).
func (s *Store) RemoveReplicaConfig(ctx context.Context, replica string) error {
	if _, err := s.db.Exec(ctx, false, `DELETE FROM replica_configs WHERE replica = ?`, replica); err != nil {
		return fmt.Errorf("remove replica config of %s: %w", replica, err)
	}
	return nil
}
