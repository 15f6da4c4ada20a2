package replica

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/agentbridge/agentbridge/store"
)

// Run keeps this replica's leases and takes the work that finds no holder,
// until ctx ends: it renews the leases of conversations that run here and
// releases the others, acts on other replicas' signals, and polls for
// conversations with work whose lease nobody holds (a replica died, a
// signal was lost). It returns when ctx ends; call Release afterwards,
// once the core has stopped, to hand the leases over.
func (r *Replica) Run(ctx context.Context, c Core) error {
	sigs, err := r.st.Listen(ctx, Channel)
	if err != nil {
		return fmt.Errorf("replica: listen: %w", err)
	}
	close(r.ready)
	every := min(r.lease/3, maxPoll)
	tick := time.NewTicker(every)
	defer tick.Stop()
	renewEvery := r.lease / 3
	lastRenew := time.Now()
	for { // the first poll after a tick: the core has started by then
		select {
		case <-ctx.Done():
			for range sigs { // Listen closes it once stopped
			}
			r.replying.Wait()
			return nil
		case p, ok := <-sigs:
			if !ok {
				r.replying.Wait()
				return nil
			}
			r.onSignal(ctx, c, p)
		case <-tick.C:
			if time.Since(lastRenew) >= renewEvery-every/2 {
				lastRenew = time.Now()
				r.renew(ctx, c)
			}
			r.poll(ctx, c)
			r.replies.prune(time.Now())
		}
	}
}

// onSignal acts on one payload of Channel ("" = Resync: poll).
func (r *Replica) onSignal(ctx context.Context, c Core, p string) {
	var s signal
	if p == "" {
		r.poll(ctx, c)
		return
	}
	if err := json.Unmarshal([]byte(p), &s); err != nil {
		r.log.Warn("unreadable signal", "err", err)
		return
	}
	switch {
	case s.Wait != "" || s.Back != "":
		switch {
		case s.From == r.id: // its own (every listener hears a signal)
		case s.Wait != "":
			r.onWaiting(s.Wait)
		default:
			c.WakeWaiting(s.Back)
		}
	case s.Reply != nil:
		r.onReply(ctx, *s.Reply)
	case s.Released:
		r.poll(ctx, c)
	case s.Conv != "":
		if _, ok := r.leaseOf(s.Conv); !ok {
			return // not ours: its holder acts, or the poll finds it unheld
		}
		if s.Resume != nil || s.Resumed != nil {
			r.onResume(ctx, c, s)
			return
		}
		if s.Action != nil {
			if err := c.HandleForwardedAction(ctx, r.forwardedClick(s.From, s.Action)); err != nil {
				r.log.Warn("forwarded click", "conversation", s.Conv, "err", err)
			}
			return
		}
		c.Poke(ctx, s.Conv)
	}
}

// renew renews the leases of conversations running here (or just claimed)
// and releases the others. A lease found lost — taken over, or not renewed
// before it ran out — is forgotten and its conversation stopped here.
func (r *Replica) renew(ctx context.Context, c Core) {
	r.followPins(ctx, c)
	live := c.LiveConversations()
	r.mu.Lock()
	type item struct {
		id   string
		l    store.Lease
		keep bool
	}
	var items []item
	for id, h := range r.held {
		items = append(items, item{id, h.lease, live[id] || time.Since(h.claimed) < r.lease})
	}
	r.mu.Unlock()
	for _, it := range items {
		if !it.keep {
			r.releaseOne(ctx, it.id, it.l)
			continue
		}
		l, err := r.st.RenewLease(ctx, it.l, r.lease)
		switch {
		case errors.Is(err, store.ErrLeaseLost), err != nil && !time.Now().Before(it.l.ValidUntil):
			// Another replica may run it now: stop acting for it at once.
			r.log.Warn("conversation lease lost; stopping the conversation here", "conversation", it.id, "err", err)
			r.forget(it.id, it.l.Token)
			c.Drop(ctx, it.id)
		case err != nil:
			r.log.Warn("renew conversation lease", "conversation", it.id, "err", err)
		default:
			r.mu.Lock()
			if h := r.held[it.id]; h != nil && h.lease.Token == l.Token {
				h.lease = l
			}
			r.mu.Unlock()
		}
	}
}

// followPins hands over the conversations whose pinned lease another
// replica holds now (Options.Pin): they stop here and move to it.
func (r *Replica) followPins(ctx context.Context, c Core) {
	moved, err := r.movedPins(ctx)
	if err != nil {
		r.log.Warn("check the conversations' pinned leases", "err", err)
		return
	}
	for _, id := range moved {
		l, ok := r.leaseOf(id)
		if !ok {
			continue
		}
		r.log.Info("the bot's connection moved to another replica: handing the conversation over", "conversation", id)
		c.Drop(ctx, id)
		r.releaseOne(ctx, id, l)
	}
	if len(moved) > 0 {
		r.notify(ctx, signal{Released: true})
	}
}

// releaseOne hands one lease over and forgets it.
func (r *Replica) releaseOne(ctx context.Context, id string, l store.Lease) {
	if err := r.st.ReleaseLease(ctx, l); err != nil && !errors.Is(err, store.ErrLeaseLost) {
		r.log.Warn("release conversation lease", "conversation", id, "err", err)
		return
	}
	r.forget(id, l.Token)
}

func (r *Replica) forget(id string, token int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if h := r.held[id]; h != nil && h.lease.Token == token {
		delete(r.held, id)
	}
}

// Release hands every lease over (a graceful stop, after the core
// stopped: nothing of this replica writes for them any more) and tells
// the other replicas, which take the conversations with work at once.
func (r *Replica) Release(ctx context.Context) {
	r.mu.Lock()
	ls := make(map[string]store.Lease, len(r.held))
	for id, h := range r.held {
		ls[id] = h.lease
	}
	r.mu.Unlock()
	for id, l := range ls {
		r.releaseOne(ctx, id, l)
	}
	if len(ls) > 0 {
		r.log.Info("conversation leases handed over", "conversations", len(ls))
	}
	r.notify(ctx, signal{Released: true})
}

// poll pokes the conversations that have work — messages not finished,
// replies not posted, cards open — and whose lease nobody holds.
func (r *Replica) poll(ctx context.Context, c Core) {
	ids, err := r.unheldWork(ctx)
	if err != nil {
		if ctx.Err() == nil {
			r.log.Warn("poll for unheld conversations", "err", err)
		}
		return
	}
	for _, id := range ids {
		c.Poke(ctx, id)
	}
}

func (r *Replica) unheldWork(ctx context.Context) ([]string, error) {
	leases, err := r.st.Leases(ctx, "")
	if err != nil {
		return nil, err
	}
	heldBy := make(map[string]bool, len(leases))
	for _, l := range leases {
		heldBy[l.Resource] = true
	}
	var ids []string
	seen := make(map[string]bool)
	add := func(id string) {
		if !seen[id] && !heldBy[resource(id)] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	undelivered, err := r.st.ConversationsWithUndelivered(ctx)
	if err != nil {
		return nil, err
	}
	for _, id := range undelivered {
		add(id)
	}
	replies, err := r.st.PendingOutbox(ctx)
	if err != nil {
		return nil, err
	}
	for _, m := range replies {
		add(m.ConversationID)
	}
	cards, err := r.st.OpenApprovals(ctx)
	if err != nil {
		return nil, err
	}
	for _, a := range cards {
		add(a.ConversationID)
	}
	return ids, nil
}
