// Package webstore is the web console's part of the store: its messages
// and uploads (web.go), conversations as their people list, rename,
// archive, share and delete them (web_threads.go), signed-in sessions
// (web_sessions.go) and tool calls kept in full (web_tools.go). It owns the
// web_* tables; package store composes it into the one Store.
package webstore

import "github.com/agentbridge/agentbridge/store/sqldb"

// Store is the web console's repository. Create it with New; it is safe
// for concurrent use.
type Store struct {
	db *sqldb.DB
}

// New returns the web console's repository on db.
func New(db *sqldb.DB) *Store { return &Store{db: db} }
