package healthz

import "time"

// Replica is /healthz's replica section: this process's owner id
// and the conversations whose leases it holds.
type Replica struct {
	ID            string   `json:"id"`
	Conversations []string `json:"conversations"`
}

// Replicas is /healthz's view of the replicas' config files. A
// file is shown by a short fingerprint (the first 12 hex digits of its
// SHA-256): /healthz needs no
// sign-in, and a config file may hold secrets.
type Replicas struct {
	Replica  string `json:"replica"`
	FileHash string `json:"file_hash"`
	// Differs are the other live processes on this database whose config
	// file differs from this one's; Note says so in words.
	Differs []ReplicaConfig `json:"differs,omitempty"`
	Note    string          `json:"note,omitempty"`
	Error   string          `json:"error,omitempty"` // the store could not be read
}

// ReplicaConfig is another replica's config in Replicas.
type ReplicaConfig struct {
	Replica    string    `json:"replica"`
	FileHash   string    `json:"file_hash"`
	Generation uint64    `json:"generation"`
	Since      time.Time `json:"since"`
}
