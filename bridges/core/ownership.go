package core

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/agentbridge/agentbridge/agent"
	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/store"
)

// Ownership decides which of several bridge replicas sharing one database
// runs each conversation (bridges/replica, wired by cmd/bridge). Without
// one (CoreOptions.Ownership nil) this process runs every conversation.
// The core calls it from its goroutines, never with its own locks held.
type Ownership interface {
	// Claim reports whether this replica may run conversation id now,
	// taking it when no replica holds it (Tenure).
	Claim(ctx context.Context, id string) (Tenure, error)
	// Holding reports, on this process's clock and without the database,
	// whether this replica still holds conversation id's lease: held and
	// not past the time by which it must have been renewed
	// (store.Lease.ValidUntil). A replica paused past its lease (a long
	// GC, SIGSTOP, a VM frozen) finds it false as soon as it runs again;
	// the worker asks before each post to the platform, which no fencing
	// token can guard.
	Holding(id string) bool
	// Forward tells the replica holding conversation id about work that
	// arrived here: new ledger messages (a nil), or a click on a card.
	Forward(ctx context.Context, id string, a *bridges.Action)
	// SaveSession stores the CLI files of a session after a turn ended;
	// RestoreSession puts them back in stateDir before a resume.
	SaveSession(ctx context.Context, id, sessionID, stateDir string)
	RestoreSession(ctx context.Context, id, sessionID, stateDir string) error
}

// Tenure is what Ownership.Claim grants.
type Tenure struct {
	// OK: this replica may run the conversation now.
	OK bool
	// Recover is true when this begins a tenure after another: what an
	// earlier holder left in flight (messages sent to its agent, open
	// cards, unposted replies) is the new holder's to recover.
	Recover bool
	// Lease is the conversation's lease for this tenure. The worker's
	// store writes are fenced by it (store.Store.Fenced): once another
	// replica took the conversation over, they are refused
	// (store.ErrFenced) and the worker stops (fence.go). Nil: unfenced.
	Lease *store.Lease
}

// ErrHeldElsewhere: another replica runs the conversation; the work was
// recorded and handed to it.
var ErrHeldElsewhere = errors.New("conversation is run by another replica")

// claim makes sure this replica may run conv before a worker is started
// or fed, recovering what an earlier holder left (see Ownership.Claim).
// It returns the tenure and the store its writes go to: fenced by the
// tenure's lease, or c.st without one.
func (c *Core) claim(conv store.Conversation) (Tenure, *store.Store, error) {
	own := c.opts.Ownership
	if own == nil {
		return Tenure{OK: true}, c.st, nil
	}
	ctx := c.runCtx
	t, err := own.Claim(ctx, conv.ID)
	if err != nil {
		return Tenure{}, nil, fmt.Errorf("claim conversation %s: %w", conv.Key, err)
	}
	if !t.OK {
		own.Forward(ctx, conv.ID, nil)
		return Tenure{}, nil, ErrHeldElsewhere
	}
	st := c.st
	if t.Lease != nil {
		st = c.st.Fenced(*t.Lease)
	}
	if t.Recover {
		if _, err := st.ResetForRedelivery(ctx, conv.ID); err != nil {
			return Tenure{}, nil, fmt.Errorf("recover conversation %s: %w", conv.Key, err)
		}
		as, err := c.st.ApprovalsForConversation(ctx, conv.ID)
		if err != nil {
			return Tenure{}, nil, fmt.Errorf("recover conversation %s: %w", conv.Key, err)
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
// worker, claiming the conversation (Ownership) and starting a worker if
// needed. The replica calls it when told of work or finding work unheld.
func (c *Core) Poke(ctx context.Context, id string) { c.restore(ctx, id, inPoke{}) }

// Drop stops conversation id's worker and agent here at once: this
// replica lost its lease (Ownership), and another may run it already.
// What the worker had not finished stays in the store for the new holder.
func (c *Core) Drop(ctx context.Context, id string) {
	c.mu.Lock()
	var cv *conversation
	for _, x := range c.convs {
		if x.id == id {
			cv = x
		}
	}
	c.mu.Unlock()
	if cv != nil {
		c.dropWorker(ctx, cv)
	}
}

// LiveConversations returns the ids of the conversations with a worker here.
func (c *Core) LiveConversations() map[string]bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	ids := make(map[string]bool, len(c.convs))
	for _, cv := range c.convs {
		ids[cv.id] = true
	}
	return ids
}

// saveSession stores the session's CLI files after a turn (Ownership).
func (cv *conversation) saveSession(ctx context.Context) {
	if own := cv.core.opts.Ownership; own != nil && cv.row.SessionID != "" {
		own.SaveSession(ctx, cv.id, cv.row.SessionID, cv.agentOptions().StateDir)
	}
}

// restoreSession puts a session's stored CLI files back before a resume
// (Ownership); it runs on the spawning goroutine. Without them the resume
// fails and the conversation starts afresh, as it tells its thread.
func (cv *conversation) restoreSession(ctx context.Context, opts agent.Options) {
	if own := cv.core.opts.Ownership; own != nil && opts.Resume && opts.StateDir != "" {
		if err := own.RestoreSession(ctx, cv.id, opts.SessionID, opts.StateDir); err != nil {
			cv.log.Warn("restore the session's files from the store", "session", opts.SessionID, "err", err)
		}
	}
}

// drainPoll is how often Drain looks whether turns still run.
const drainPoll = 100 * time.Millisecond

// Drain prepares a graceful stop of a replica (Ownership): from now on no
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
// here that are busy with a turn (busyWithTurn) or have replies not
// posted yet. A worker that does not answer within drainPoll*10 counts as
// busy, one that retired meanwhile does not.
func (c *Core) busyConversations(ctx context.Context) []string {
	c.mu.Lock()
	convs := make([]*conversation, 0, len(c.convs))
	for _, cv := range c.convs {
		convs = append(convs, cv)
	}
	c.mu.Unlock()
	type answer struct {
		id   string
		busy bool
	}
	answers := make(chan answer, len(convs))
	asked := map[string]bool{}
	for _, cv := range convs {
		if cv.q.Push(inCall{func(_ context.Context, cv *conversation) { answers <- answer{cv.id, cv.busyWithTurn()} }}) == nil {
			asked[cv.id] = true
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
			for _, cv := range convs {
				if asked[cv.id] && !cv.q.Closed() {
					busy = append(busy, cv.id)
				}
			}
			asked = nil
		case <-ctx.Done():
			return []string{"(stopping)"}
		}
	}
	if replies, err := c.st.PendingOutbox(ctx); err == nil {
		for _, m := range replies {
			if slices.ContainsFunc(convs, func(cv *conversation) bool { return cv.id == m.ConversationID }) {
				busy = append(busy, m.ConversationID)
			}
		}
	} else if ctx.Err() == nil {
		c.log.Warn("graceful stop: read unposted replies", "err", err)
	}
	return busy
}
