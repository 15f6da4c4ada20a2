// Package schedstore is the schedules' part of the store: the prompts sent
// to an agent on a cron schedule, from the config, a chat or the agent
// itself, with what each firing did (table schedules). Package store
// composes it into the one Store.
package schedstore

import "github.com/agentbridge/agentbridge/store/sqldb"

// Store is the schedules' repository. Create it with New; it is safe for
// concurrent use.
type Store struct {
	db *sqldb.DB
}

// New returns the schedules' repository on db.
func New(db *sqldb.DB) *Store { return &Store{db: db} }
