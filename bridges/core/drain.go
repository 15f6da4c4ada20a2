package core

import (
	"context"
	"slices"
	"time"
)

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
