package core

import (
	"context"
	"errors"
	"time"

	"github.com/agentbridge/agentbridge/store"
)

// Backoff of retrying the writes a full disk refused (see recordInOrder).
const (
	unrecordedFirstRetry = time.Second
	unrecordedMaxRetry   = 15 * time.Second
)

// unrecordedWrite is a store write of the worker that the database refused
// for want of space (store.IsFull). It is kept in memory and made again,
// in order, once the database can be written.
type unrecordedWrite struct {
	what   string // for logs: "ledger started", "turn's reply", …
	markID string // a ledger or outbox mark: the row it moves ("" otherwise)
	do     func(ctx context.Context) error
}

// recordInOrder makes the store write w, or keeps it for later when the
// database cannot be written now (a full disk) or when earlier writes
// still wait: the worker's ledger marks, turn results, usage, posted marks
// and approval audit entries are then recorded in the order they happened, nothing is lost while the bridge
// runs, and no message whose mark waits is delivered twice
// (deliverPending skips it, see waitsForMark), nor a reply posted twice. It returns whether the
// write was kept for later, and any other error of the write.
func (cv *conversation) recordInOrder(ctx context.Context, w unrecordedWrite) (kept bool, err error) {
	if len(cv.unrecorded) == 0 {
		err := w.do(ctx)
		if !store.IsFull(err) {
			return false, err
		}
		cv.log.Warn("the database cannot be written; keeping the write in memory until it can", "write", w.what, "err", err)
	}
	cv.unrecorded = append(cv.unrecorded, w)
	if !cv.hasTimer(timerDisk, "") {
		cv.unrecordedDelay = unrecordedFirstRetry
		cv.after(cv.unrecordedDelay, timerDisk, "")
	}
	return true, nil
}

// waitsForMark reports whether a mark of ledger message or outbox reply
// id waits in memory: the row has moved on (sent, answered, posted)
// though the database does not say so yet.
func (cv *conversation) waitsForMark(id string) bool {
	for _, w := range cv.unrecorded {
		if w.markID == id {
			return true
		}
	}
	return false
}

// retryUnrecorded makes the kept writes again, oldest first, until one is
// refused again (then it tries later, with backoff up to
// unrecordedMaxRetry) or all are made; then the replies they recorded are
// posted and pending messages delivered. A write failing for another
// reason is logged and dropped: retrying cannot fix it.
func (cv *conversation) retryUnrecorded(ctx context.Context) {
	for len(cv.unrecorded) > 0 {
		w := cv.unrecorded[0]
		err := w.do(ctx)
		if store.IsFull(err) || (err != nil && ctx.Err() != nil) {
			cv.unrecordedDelay = min(2*cv.unrecordedDelay, unrecordedMaxRetry)
			cv.after(cv.unrecordedDelay, timerDisk, "")
			return
		}
		if err != nil && !errors.Is(err, store.ErrBadTransition) && !errors.Is(err, store.ErrAlreadyDecided) {
			cv.log.Error("write kept while the disk was full failed; dropping it", "write", w.what, "err", err)
		}
		cv.unrecorded[0] = unrecordedWrite{}
		cv.unrecorded = cv.unrecorded[1:]
	}
	cv.unrecorded = nil
	cv.log.Info("writes kept while the disk was full are recorded")
	cv.flushOutbox(ctx)
	cv.deliverPending(ctx)
}

// recordOrLog is recordInOrder for a write whose other errors are logged
// as "failed to <what>" with attrs.
func (cv *conversation) recordOrLog(ctx context.Context, what string, do func(ctx context.Context) error, attrs ...any) {
	if _, err := cv.recordInOrder(ctx, unrecordedWrite{what: what, do: do}); err != nil {
		cv.log.Error(what, append(attrs, "err", err)...)
	}
}
