package config

import (
	"time"

	"github.com/agentbridge/agentbridge/config/decode"
	"go.yaml.in/yaml/v3"
)

// Lease times of replicas (yaml replicas.lease).
const (
	DefaultReplicaLease = 15 * time.Second
	MinReplicaLease     = time.Second
	MaxReplicaLease     = 10 * time.Minute
)

// Replicas lets several bridge processes share one PostgreSQL store and
// form one bridge (yaml replicas, see docs/scaling.md). The zero
// value, and an absent key, is one bridge process: the embedded default.
type Replicas struct {
	// Enabled opts in (yaml enabled). Only with store.driver: postgres;
	// without it a second bridge on the same database is refused.
	Enabled bool
	// Lease is how long a conversation's lease lasts without renewal
	// (yaml lease; default 15s, from 1s to 10m): the longest a dead
	// replica's conversations wait before another replica takes them.
	Lease time.Duration
}

// replicasSection decodes the top-level replicas mapping.
func (d *decoder) replicasSection(dst *Replicas) decode.Field {
	return func(v *yaml.Node, p string) {
		d.Fields(v, p, map[string]decode.Field{
			"enabled": d.Bool(&dst.Enabled),
			"lease":   d.Duration(&dst.Lease),
		})
	}
}

// finishReplicas applies the default lease and checks the section against
// the store driver. Call it after finishStore.
func (d *decoder) finishReplicas(c *Config) {
	r := &c.Replicas
	if !d.IsSet("replicas.lease") && !d.IsBad("replicas.lease") {
		r.Lease = DefaultReplicaLease
	}
	if !d.IsBad("replicas.lease") && (r.Lease < MinReplicaLease || r.Lease > MaxReplicaLease) {
		d.Addf(d.LineOf("replicas.lease"), "replicas.lease", "lease %s is outside %s to %s", r.Lease, MinReplicaLease, MaxReplicaLease)
	}
	if r.Enabled && c.Store.Driver != StorePostgres && !d.IsBad("store.driver") {
		d.Addf(d.LineOf("replicas.enabled"), "replicas.enabled",
			"replicas need store.driver: postgres (replicas share one PostgreSQL database; SQLite is one process)")
	}
}
