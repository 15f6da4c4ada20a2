package core

import (
	"context"
	"errors"

	"github.com/agentbridge/agentbridge/store"
)

// A worker acts for its conversation only during the tenure it was started
// in (Ownership). Its store writes are fenced by the tenure's lease
// (Tenure.Lease, store.Store.Fenced): once another replica took the
// conversation over, every write is refused with store.ErrFenced and
// nothing of it is recorded. Posts to the platform cannot carry a token,
// so before each one the worker asks Ownership.Holding, a check on this
// process's clock. Either way the worker is lost: it handles no more
// input, posts nothing more, and is stopped with its agent (dropWorker),
// as when the replica finds the lease lost at a renewal (Drop). The new
// holder recovers what it left.

// errTenureOver is a post refused because the worker's tenure is over.
var errTenureOver = errors.New("this replica no longer holds the conversation")

// fenced reports whether err is a write refused because this replica no
// longer holds the conversation's lease, and if so marks the worker lost.
// The worker calls it where a failed write would otherwise make it post
// (the turn's reply) or retry.
func (cv *conversation) fenced(err error) bool {
	if !errors.Is(err, store.ErrFenced) {
		return false
	}
	cv.loseTenure("a store write was fenced out: another replica holds the conversation")
	return true
}

// mayPost reports whether the worker may still post or edit in its
// conversation: it is not lost and, with replicas, this replica still
// holds the lease by its own clock. A false answer marks it lost.
func (cv *conversation) mayPost() bool {
	if cv.lost.Load() {
		return false
	}
	if own := cv.core.opts.Ownership; own != nil && !own.Holding(cv.id) {
		cv.loseTenure("the conversation's lease ran out before this replica renewed it")
		return false
	}
	return true
}

// loseTenure marks the worker lost (once) and has it stopped with its
// agent in the background (dropWorker): it must not wait for the worker,
// which may be the caller. It never blocks.
func (cv *conversation) loseTenure(why string) {
	if !cv.lost.CompareAndSwap(false, true) {
		return
	}
	c := cv.core
	cv.log.Warn("stopping the conversation here: this replica lost its lease", "why", why)
	c.workers.Go(func() { c.dropWorker(context.WithoutCancel(c.runCtx), cv) })
}

// dropWorker stops worker cv and its agent at once (Drop, loseTenure):
// it is forgotten, its queue closed and waited for, its timers stopped
// and the conversation's agent process removed. What it had not finished stays in the
// store for the conversation's holder. It must not run on cv's worker.
func (c *Core) dropWorker(ctx context.Context, cv *conversation) {
	cv.lost.Store(true)
	c.mu.Lock()
	if c.convs[cv.key] == cv {
		delete(c.convs, cv.key)
		c.budgets.Release(cv.key)
	}
	cv.q.Close()
	c.mu.Unlock()
	cv.q.Wait()
	cv.stopTimers()
	// Its agent goes, also when a worker of a newer tenure already
	// started (conversationLocked): that one must not inherit a process
	// with the old tenure's turn in it, and if it had acquired it, it
	// sees the exit and resumes the session afresh.
	if err := c.pool.Remove(ctx, cv.id); err != nil {
		c.log.Warn("stop the agent of a conversation whose lease was lost", "conversation", cv.id, "err", err)
	}
}
