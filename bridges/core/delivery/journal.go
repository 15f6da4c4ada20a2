package delivery

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/agentbridge/agentbridge/store"
)

// Backoff of retrying the writes a full disk refused (see Journal.Record).
const (
	unrecordedFirstRetry = time.Second
	unrecordedMaxRetry   = 15 * time.Second
)

// Write is a store write of the worker that the database may refuse for
// want of space (store.IsFull). It is then kept in memory and made again,
// in order, once the database can be written.
type Write struct {
	What   string // for logs: "ledger started", "turn's reply", …
	MarkID string // a ledger or outbox mark: the row it moves ("" otherwise)
	Do     func(ctx context.Context) error
}

// Journal is a conversation's store writes that wait for the disk: the
// worker's ledger marks, turn results, usage, posted marks and approval
// audit entries, recorded in the order they happened. It is owned by the
// conversation's worker: not safe for concurrent use.
type Journal struct {
	log   *slog.Logger
	arm   func(d time.Duration)
	armed bool // a retry is scheduled
	kept  []Write
	delay time.Duration
}

// NewJournal is an empty journal. arm schedules a retry: after d the
// worker calls Retry.
func NewJournal(log *slog.Logger, arm func(d time.Duration)) *Journal {
	return &Journal{log: log, arm: arm}
}

// Len is the number of writes kept for later.
func (j *Journal) Len() int { return len(j.kept) }

// Record makes the store write w, or keeps it for later when the
// database cannot be written now (a full disk) or when earlier writes
// still wait: the writes are then recorded in the order they happened,
// nothing is lost while the bridge runs, and no message whose mark waits
// is delivered twice (the worker skips it, see Waits), nor a reply posted
// twice. It returns whether the write was kept for later, and any other
// error of the write.
func (j *Journal) Record(ctx context.Context, w Write) (kept bool, err error) {
	if len(j.kept) == 0 {
		err := w.Do(ctx)
		if !store.IsFull(err) {
			return false, err
		}
		j.log.Warn("the database cannot be written; keeping the write in memory until it can", "write", w.What, "err", err)
	}
	j.kept = append(j.kept, w)
	if !j.armed {
		j.delay = unrecordedFirstRetry
		j.after(j.delay)
	}
	return true, nil
}

// Waits reports whether a mark of ledger message or outbox reply id
// waits in memory: the row has moved on (sent, answered, posted) though
// the database does not say so yet.
func (j *Journal) Waits(id string) bool {
	for _, w := range j.kept {
		if w.MarkID == id {
			return true
		}
	}
	return false
}

// Retry is the retry scheduled by Record firing: it makes the kept writes
// again, oldest first, until one is refused again (then it tries later,
// with backoff up to unrecordedMaxRetry) or all are made. It reports true
// when all are made: the worker then posts the replies they recorded and
// delivers pending messages. A write failing for another reason is logged
// and dropped: retrying cannot fix it.
func (j *Journal) Retry(ctx context.Context) bool {
	j.armed = false
	for len(j.kept) > 0 {
		w := j.kept[0]
		err := w.Do(ctx)
		if store.IsFull(err) || (err != nil && ctx.Err() != nil) {
			j.delay = min(2*j.delay, unrecordedMaxRetry)
			j.after(j.delay)
			return false
		}
		if err != nil && !errors.Is(err, store.ErrBadTransition) && !errors.Is(err, store.ErrAlreadyDecided) {
			j.log.Error("write kept while the disk was full failed; dropping it", "write", w.What, "err", err)
		}
		j.kept[0] = Write{}
		j.kept = j.kept[1:]
	}
	j.kept = nil
	j.log.Info("writes kept while the disk was full are recorded")
	return true
}

// after schedules the next Retry.
func (j *Journal) after(d time.Duration) {
	j.armed = true
	j.arm(d)
}
