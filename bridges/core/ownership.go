package core

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/agentbridge/agentbridge/bridges/core/ownership"
	"github.com/agentbridge/agentbridge/bridges/core/worker"
	"github.com/agentbridge/agentbridge/store"
)

// claim makes sure this replica may run conv before a worker is started
// or fed, recovering what an earlier holder left (see ownership.Ownership.Claim).
// It returns the tenure and the store its writes go to: fenced by the
// tenure's lease, or c.st without one.
func (c *Core) claim(conv store.Conversation) (ownership.Tenure, *store.Store, error) {
	own := c.opts.Ownership
	if own == nil {
		return ownership.Tenure{OK: true}, c.st, nil
	}
	ctx := c.runCtx
	t, err := own.Claim(ctx, conv.ID)
	if err != nil {
		return ownership.Tenure{}, nil, fmt.Errorf("claim conversation %s: %w", conv.Key, err)
	}
	if !t.OK {
		own.Forward(ctx, conv.ID, nil)
		return ownership.Tenure{}, nil, ownership.ErrHeldElsewhere
	}
	st := c.st
	if t.Lease != nil {
		st = c.st.Fenced(*t.Lease)
	}
	if t.Recover {
		if _, err := st.ResetForRedelivery(ctx, conv.ID); err != nil {
			return ownership.Tenure{}, nil, fmt.Errorf("recover conversation %s: %w", conv.Key, err)
		}
		as, err := c.st.ApprovalsForConversation(ctx, conv.ID)
		if err != nil {
			return ownership.Tenure{}, nil, fmt.Errorf("recover conversation %s: %w", conv.Key, err)
		}
		var open []store.Approval
		for _, a := range as {
			if a.Open() {
				open = append(open, a)
			}
		}
		c.closeStaleCards(ctx, st, open)
	}
	return t, st, nil
}

// Poke hands conversation id's pending ledger messages and replies to its
// worker, claiming the conversation (ownership.Ownership) and starting a worker if
// needed. The replica calls it when told of work or finding work unheld.
func (c *Core) Poke(ctx context.Context, id string) { c.restore(ctx, id, worker.Poke()) }

// Drop stops conversation id's worker and agent here at once: this
// replica lost its lease (ownership.Ownership), and another may run it already.
// What the worker had not finished stays in the store for the new holder.
func (c *Core) Drop(ctx context.Context, id string) {
	c.mu.Lock()
	var w worker.Worker
	found := false
	for _, x := range c.convs {
		if x.ID() == id {
			w, found = x, true
		}
	}
	c.mu.Unlock()
	if found {
		c.dropWorker(ctx, w)
	}
}

// LiveConversations returns the ids of the conversations with a worker here.
func (c *Core) LiveConversations() map[string]bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	ids := make(map[string]bool, len(c.convs))
	for _, w := range c.convs {
		ids[w.ID()] = true
	}
	return ids
}

// drainPoll is how often Drain looks whether turns still run.
const drainPoll = 100 * time.Millisecond

// Drain prepares a graceful stop of a replica (ownership.Ownership): from now on no
// pending message is written to this process's agents (the next holder
// gets them), and Drain waits until none of its conversations has a turn
// running, a message in flight, an open card or an unposted reply — or
// until ctx ends. Then the caller stops the core and hands the leases
// over, so that running turns finish and are answered here instead of
// being interrupted and delivered again elsewhere. It does not return to
// normal work: call it only on the way out.
func (c *Core) Drain(ctx context.Context) {
	c.draining.Store(true)
	for {
		busy := c.busyConversations(ctx)
		if len(busy) == 0 {
			return
		}
		t := time.NewTimer(drainPoll)
		select {
		case <-ctx.Done():
			t.Stop()
			c.log.Warn("graceful stop: turns still running; they are stopped and delivered again by another replica",
				"conversations", len(busy))
			return
		case <-t.C:
		}
	}
}

// busyConversations returns the ids of the conversations with a worker
// here that are busy with a turn (worker.AskBusy) or have replies not
// posted yet. A worker that does not answer within drainPoll*10 counts as
// busy, one that retired meanwhile does not.
func (c *Core) busyConversations(ctx context.Context) []string {
	c.mu.Lock()
	convs := slices.Collect(maps.Values(c.convs))
	c.mu.Unlock()
	type answer struct {
		id   string
		busy bool
	}
	answers := make(chan answer, len(convs))
	asked := map[string]bool{}
	for _, w := range convs {
		if w.Push(worker.AskBusy(func(id string, busy bool) { answers <- answer{id, busy} })) == nil {
			asked[w.ID()] = true
		}
	}
	var busy []string
	wait := time.NewTimer(10 * drainPoll)
	defer wait.Stop()
	for len(asked) > 0 {
		select {
		case a := <-answers:
			delete(asked, a.id)
			if a.busy {
				busy = append(busy, a.id)
			}
		case <-wait.C:
			for _, w := range convs {
				if asked[w.ID()] && !w.Closed() {
					busy = append(busy, w.ID())
				}
			}
			asked = nil
		case <-ctx.Done():
			return []string{"(stopping)"}
		}
	}
	if replies, err := c.st.PendingOutbox(ctx); err == nil {
		for _, m := range replies {
			if slices.ContainsFunc(convs, func(w worker.Worker) bool { return w.ID() == m.ConversationID }) {
				busy = append(busy, m.ConversationID)
			}
		}
	} else if ctx.Err() == nil {
		c.log.Warn("graceful stop: read unposted replies", "err", err)
	}
	return busy
}

// A worker acts for its conversation only during the tenure it was started
// in (ownership.Ownership). Its store writes are fenced by the tenure's lease
// (ownership.Tenure.Lease, store.Store.Fenced): once another replica took the
// conversation over, every write is refused with store.ErrFenced and
// nothing of it is recorded. Posts to the platform cannot carry a token,
// so before each one the worker asks ownership.Ownership.Holding, a check on this
// process's clock. Either way the worker is lost: it handles no more
// input, posts nothing more, and is stopped with its agent (dropWorker),
// as when the replica finds the lease lost at a renewal (Drop). The new
// holder recovers what it left.

// dropWorker stops worker w and its agent at once (Drop, Worker.LoseTenure):
// it is forgotten, its queue closed and waited for, its timers stopped
// and the conversation's agent process removed. What it had not finished stays in the
// store for the conversation's holder. It must not run on w.
func (c *Core) dropWorker(ctx context.Context, w worker.Worker) {
	w.MarkLost()
	c.mu.Lock()
	if c.convs[w.Key()] == w {
		delete(c.convs, w.Key())
		c.budgets.Release(w.Key())
	}
	w.Close()
	c.mu.Unlock()
	w.Wait()
	// Its agent goes, also when a worker of a newer tenure already
	// started (conversationLocked): that one must not inherit a process
	// with the old tenure's turn in it, and if it had acquired it, it
	// sees the exit and resumes the session afresh.
	if err := c.pool.Remove(ctx, w.ID()); err != nil {
		c.log.Warn("stop the agent of a conversation whose lease was lost", "conversation", w.ID(), "err", err)
	}
}
