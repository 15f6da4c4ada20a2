package replica

import (
	"context"
	"sync"
	"time"
)

// Signs that a platform is back, across replicas. A conversation's replies
// wait through an outage on the replica that holds it, but the first sign
// that the platform answers again — an event from it, a call that worked
// — may come to another replica (on Discord every event comes to the one
// replica holding the gateway). So the replica whose replies wait says so
// (WaitingFor: a signal naming the bot, at most once per waitSignalEvery);
// the others remember it, and the next sign they see of that bot's
// platform (PlatformBack) is signalled back, once, and wakes the waiting
// replies there (Core.WakeWaiting). Nothing is signalled while no reply
// waits.

// waitSignalEvery bounds how often a replica says that replies of a bot
// wait there.
const waitSignalEvery = time.Second

// waiterKept is how long a replica remembers that another waits for a
// bot's platform without hearing it again (the waiting one says so again
// with each retry it schedules, at least once per minute).
const waiterKept = 3 * time.Minute

// backState is a replica's share of the above.
type backState struct {
	mu       sync.Mutex
	saidWait map[string]time.Time // bot → when this replica last said its replies wait
	waiters  map[string]time.Time // bot → when another replica last said its replies wait
}

// WaitingFor implements ownership.BackSignaler: replies of bot wait here
// for its platform to answer again.
func (r *Replica) WaitingFor(ctx context.Context, bot string) {
	now := time.Now()
	r.back.mu.Lock()
	if r.back.saidWait == nil {
		r.back.saidWait = map[string]time.Time{}
	}
	last, said := r.back.saidWait[bot]
	if said && now.Sub(last) < waitSignalEvery {
		r.back.mu.Unlock()
		return
	}
	r.back.saidWait[bot] = now
	r.back.mu.Unlock()
	r.notify(ctx, signal{Wait: bot})
}

// PlatformBack implements ownership.BackSignaler: bot's platform answered
// here. If another replica said its replies wait for it, it is told.
func (r *Replica) PlatformBack(ctx context.Context, bot string) {
	r.back.mu.Lock()
	at, waits := r.back.waiters[bot]
	if waits {
		delete(r.back.waiters, bot)
	}
	r.back.mu.Unlock()
	if waits && time.Since(at) < waiterKept {
		r.notify(ctx, signal{Back: bot})
	}
}

// onWaiting remembers that another replica's replies of bot wait.
func (r *Replica) onWaiting(bot string) {
	r.back.mu.Lock()
	defer r.back.mu.Unlock()
	if r.back.waiters == nil {
		r.back.waiters = map[string]time.Time{}
	}
	r.back.waiters[bot] = time.Now()
}
