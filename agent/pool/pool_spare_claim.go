package pool

import (
	"context"
	"time"

	"github.com/agentbridge/agentbridge/agent"
)

// A new conversation that finds no ready spare but one still booting takes
// that one instead of starting a process of its own: the spare began
// earlier, so it is ready sooner than a cold start begun now, and a second
// boot next to it would share the cores and slow both down (on two cores a
// cold start beside a booting spare took longer than a cold start alone).
// A claimed spare skips its warm-up turn if it has not begun it (the
// conversation's own first turn does that work), is never trimmed, yielded
// or handed to anyone else, and is handed over as soon as it is ready.

// claimWaitMin is the least a conversation waits for the spare it claimed
// before it gives up and starts cold; the bound is otherwise twice the
// spares' measured boot time.
const claimWaitMin = 2 * time.Second

// claimBootingLocked marks and returns the spare of ss, started with the
// profile's current options and still booting, that began first; nil if
// there is none. Needs p.mu.
func (p *Pool) claimBootingLocked(ss *spareSet) *poolEntry {
	var pick *poolEntry
	for _, e := range p.entries {
		if e.spare == ss && !e.ready && !e.stopping && !e.claimed && e.spareGen == ss.gen &&
			(e.s == nil || e.s.Alive()) && (pick == nil || e.began.Before(pick.began)) {
			pick = e
		}
	}
	if pick != nil {
		pick.claimed = true
		p.fullCPU(pick) // a conversation waits for it now (if spawned yet; else at its spawn)
	}
	return pick
}

// spareCPU is the share of the CPU, in cores, that a spare boots with
// where the profile has a CPU share (a cgroup with a CPU controller):
// about 1/50 of a conversation's, so that a spare's boot and warm-up turn
// take only what the conversations leave over, while an idle machine
// still boots it at full speed.
const spareCPU = 0.02

// fullCPU gives the spare or warm resume e, taken or claimed by a
// conversation, the profile's CPU share. Needs p.mu; e.s nil (not spawned yet) does nothing.
func (p *Pool) fullCPU(e *poolEntry) {
	if e.s == nil {
		return
	}
	if err := e.s.UseFullCPU(); err != nil {
		p.log.Warn("agent: the CPU share of a spare taken could not be raised", "session", e.s.SessionID(), "err", err)
	}
}

// awaitClaimed waits for the claimed spare e to be ready and hands it to
// key. It returns nil, with the claim given up, when the spare failed, was
// stopped, the pool closed, ctx ended, or the spare took longer than the
// wait bound: the caller then starts a process of its own.
func (p *Pool) awaitClaimed(ctx context.Context, ss *spareSet, e *poolEntry, key string, limit Limit, opts agent.Options) *agent.Session {
	p.mu.Lock()
	deadline := time.Now().Add(max(claimWaitMin, 2*ss.auto.bootTime()))
	giveUp := func(why string) *agent.Session {
		e.claimed = false
		p.notifyLocked() // a plain spare again: the keeper may count it
		p.mu.Unlock()
		p.log.Info("agent: booting warm spare given up; starting a process of its own", "key", key, "profile", limit.Profile, "why", why)
		return nil
	}
	for {
		switch {
		case p.closed:
			return giveUp("pool closed")
		case e.stopping || e.spare != ss || p.entries[e.key] != e || e.s != nil && !e.s.Alive():
			return giveUp("the spare stopped")
		case p.entries[key] != nil:
			return giveUp("the conversation has a process already")
		case e.spareGen != ss.gen:
			return giveUp("the profile was reloaded") // the keeper trims it now
		case e.ready:
			s := p.handOverLocked(ss, e, key, limit)
			e.claimed = false
			bindServers(s.Options().MCPServers, opts.MCPServers)
			p.mu.Unlock()
			return s
		}
		left := time.Until(deadline)
		if left <= 0 {
			return giveUp("not ready in time")
		}
		err := p.waitLockedFor(ctx, left)
		p.mu.Lock()
		if err != nil {
			return giveUp(err.Error())
		}
	}
}
