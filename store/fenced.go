package store

import (
	"github.com/agentbridge/agentbridge/store/convstore"
	"github.com/agentbridge/agentbridge/store/schedstore"
	"github.com/agentbridge/agentbridge/store/webstore"
)

// Fenced returns a view of the store whose every write is fenced by lease
// l (coord.Coordinator.Fence): in the write's own transaction it checks
// that l's owner still holds l's resource with l's token, and otherwise
// refuses with an error matching ErrFenced, having written nothing. A
// replica hands its conversation's worker such a view for the tenure l
// began, so that after losing the lease — paused past it, cut off from the
// database — none of its ledger, outbox, approval or settings writes can
// overwrite what the new holder wrote.
//
// The view shares the database handle's pools, writer and write health
// with s; reads are as s's. Lease operations and signals (AcquireLease,
// RenewLease, ReleaseLease, Notify, Listen, …) are s's own, unfenced.
// Without replicas nobody calls Fenced: one process writes unfenced, with
// no extra query.
func (s *Store) Fenced(l Lease) *Store {
	db := s.db.Guarded(s.coordinator.Fence(l))
	return &Store{
		conversations: convstore.New(db),
		schedules:     schedstore.New(db),
		webConsole:    webstore.New(db),
		coordinator:   s.coordinator,
		db:            db,
		pruneBatch:    s.pruneBatch,
	}
}
