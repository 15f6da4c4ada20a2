package app

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/agentbridge/agentbridge/bridges/app/healthz"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/store"
)

// replicaBeat is how often a process records the config it runs
// (replica_configs); a row not refreshed within replicaLive belongs to a
// process that is gone.
const (
	replicaBeat = 30 * time.Second
	replicaLive = 3 * replicaBeat
)

// replicaID is this process's id in the store when none is configured:
// hostname-pid.
func replicaID() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "unknown"
	}
	return fmt.Sprintf("%s-%d", host, os.Getpid())
}

// fileSum is the hex SHA-256 of the file at path, "" when it cannot be
// read.
func fileSum(path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// replicaConfigs records which config file this process runs — its
// hash, with the generation in force — in the store it shares with the
// other bridge processes (replicas) of one database, and notices the live
// ones whose file differs: /healthz says so. Each replica reloads its own
// file the same way; this only tells an operator that their files are not
// the same. Safe for concurrent use.
type replicaConfigs struct {
	id  string
	st  *store.Store
	log *slog.Logger
	now func() time.Time

	mu      sync.Mutex
	mine    store.ReplicaConfig   // what this process runs
	differs []store.ReplicaConfig // live others whose file differs, at the last beat
	err     string                // the last beat's store error
}

// set records that this process now runs the file hashed hash as
// generation g.
func (rc *replicaConfigs) set(hash string, g config.Generation) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.mine = store.ReplicaConfig{Replica: rc.id, FileHash: hash, Generation: g.Number, AppliedAt: g.At}
}

// beat writes this process's row and reads the others'.
func (rc *replicaConfigs) beat(ctx context.Context) {
	now := rc.now()
	rc.mu.Lock()
	mine := rc.mine
	rc.mu.Unlock()
	mine.SeenAt = now
	if mine.FileHash == "" {
		return // the file could not be read: nothing to compare
	}
	err := rc.st.RecordReplicaConfig(ctx, mine)
	var rows []store.ReplicaConfig
	if err == nil {
		rows, err = rc.st.ReplicaConfigs(ctx, now.Add(-replicaLive))
	}
	var differs []store.ReplicaConfig
	for _, r := range rows {
		if r.Replica != rc.id && r.FileHash != mine.FileHash {
			differs = append(differs, r)
		}
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if err != nil {
		rc.err = err.Error()
		rc.log.Warn("record the config this replica runs", "err", err)
		return
	}
	if len(differs) > 0 && len(rc.differs) == 0 {
		rc.log.Warn("another bridge process on this database runs a different config file", "replica", rc.id,
			"other", differs[0].Replica, "other_generation", differs[0].Generation)
	}
	rc.differs, rc.err = differs, ""
}

// run beats now and every every until ctx ends, then removes this
// process's row.
func (rc *replicaConfigs) run(ctx context.Context, every time.Duration) {
	rc.beat(ctx)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			rc.beat(ctx)
		case <-ctx.Done():
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			if err := rc.st.RemoveReplicaConfig(rctx, rc.id); err != nil {
				rc.log.Warn("remove this replica's config record", "err", err)
			}
			return
		}
	}
}

// status is what /healthz shows.
func (rc *replicaConfigs) status() *healthz.Replicas {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	h := &healthz.Replicas{Replica: rc.id, FileHash: fingerprint(rc.mine.FileHash), Error: rc.err}
	for _, d := range rc.differs {
		h.Differs = append(h.Differs, healthz.ReplicaConfig{Replica: d.Replica, FileHash: fingerprint(d.FileHash), Generation: d.Generation,
			Since: d.AppliedAt.UTC()})
	}
	if len(h.Differs) > 0 {
		h.Note = fmt.Sprintf("this process's config file differs from that of %d other live replica(s) on the same database (first: %s, generation %d): "+
			"give every replica the same file and reload them", len(h.Differs), h.Differs[0].Replica, h.Differs[0].Generation)
	}
	return h
}

// replicasStatus is rc's status for /healthz, nil without rc.
func replicasStatus(rc *replicaConfigs) func() *healthz.Replicas {
	if rc == nil {
		return nil
	}
	return rc.status
}

// fingerprint is the first 12 hex digits of a file's SHA-256: enough to
// tell files apart, too short to test guesses of a secret in the file.
func fingerprint(hash string) string { return hash[:min(len(hash), 12)] }
