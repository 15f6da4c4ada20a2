package pool

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/agentbridge/agentbridge/agent"
)

// Warm resume: a conversation likely to come back (one that was active
// shortly before the bridge restarted) gets its process started ahead of
// time with --resume, initialized and, like a warm spare, given a warm-up
// turn that is rewound at once. Its next message then finds a live process
// and is answered about as fast as a follow-up, instead of waiting for a
// cold resume. The Claude Code CLI (2.1.330; 2.1.332 passes the same test)
// has no control request that loads a stored session into a running
// process (claim_session binds only a fresh session to a process started
// with --await-claim; see agent/streamjson/testdata/protocol-resume.md), so
// the session must be chosen at spawn: a warm resume is a guess, bounded
// like a spare.

// WarmResume starts key's session with opts (opts.Resume must be true)
// ahead of its next Acquire, and returns once it is ready (initialized and,
// with warmUp, warmed up) or failed. It never evicts or waits for a slot:
// it starts only while the profile has a slot free beyond the warm spares
// it wants (every process counts against limit.MaxLive) and, when the
// profile's spares have a SpareMemory, that much memory is available.
// Until an Acquire of key claims it, it yields its slot to any
// conversation that needs one (as a spare does), is stopped after
// limit.IdleTimeout unused, and Get does not report it. An Acquire of key
// whose options equal opts (apart from the MCP servers, which are bound
// then) takes it at once; one with other options stops it and spawns anew.
// Options include ResumeStamp: an Acquire whose session files are not the
// ones this process started from (another replica ran turns meanwhile)
// never gets it.
// It returns an error wrapping ErrNoRoom when nothing was started for want
// of a slot or memory, and another error when key already has a session.
func (p *Pool) WarmResume(ctx context.Context, key string, limit Limit, opts agent.Options, warmUp bool) error {
	if !opts.Resume {
		return fmt.Errorf("warm resume %s: options do not resume a session", key)
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return fmt.Errorf("warm resume %s: %w", key, ErrClosed)
	}
	if p.entries[key] != nil {
		p.mu.Unlock()
		return fmt.Errorf("warm resume %s: the conversation has a process already", key)
	}
	if why := p.noRoomForWarmResumeLocked(key, limit); why != "" {
		p.mu.Unlock()
		return fmt.Errorf("warm resume %s: %w: %s", key, ErrNoRoom, why)
	}
	e := &poolEntry{key: key, limit: limit, warmResume: true}
	p.entries[key] = e
	p.mu.Unlock()

	wopts := opts
	wopts.MCPServers = lateServers(opts.MCPServers) // bound to the conversation's at claim
	wopts.StartCPU = spareCPU                       // a guess: it boots on leftover CPU, like a spare
	s, err := p.start(ctx, e, wopts)
	if err != nil {
		return fmt.Errorf("warm resume: %w", err)
	}
	log := p.log.With("key", key, "profile", limit.Profile)
	began := time.Now()
	err = s.Initialize(ctx)
	if err == nil && warmUp && warmUpBlocker(wopts) == "" {
		err = p.warmUpSpare(ctx, s, wopts, log)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	defer p.notifyLocked()
	if err != nil || e.stopping || !s.Alive() {
		if err == nil {
			err = errors.New("stopped before it was ready")
		}
		if !e.stopping {
			e.stopping = true
			p.tasks.Go(func() { _ = s.Stop(context.Background(), "warm resume failed") })
		}
		return fmt.Errorf("warm resume %s: %w", key, err)
	}
	e.ready = true
	log.Info("agent: conversation resumed ahead of its return", "session", s.SessionID(), "startup", time.Since(began))
	return nil
}

// noRoomForWarmResumeLocked says why key cannot get a warm resume now ("" =
// it can). Needs p.mu.
func (p *Pool) noRoomForWarmResumeLocked(key string, limit Limit) string {
	ss := p.spares[limit.Profile]
	if limit.MaxLive > 0 {
		// Acquires under way come first: counted as using a slot each
		// (twice once they hold their entry: on the safe side).
		used := p.waiting[limit.Profile]
		for _, e := range p.entries {
			if e.limit.Profile == limit.Profile && e.spare == nil {
				used++
			}
		}
		if ss != nil {
			used += ss.wantLocked(time.Now()) // the spares' slots stay theirs
		}
		if used >= limit.MaxLive {
			return "no free slot"
		}
	}
	if ss != nil && ss.cfg.SpareMemory > 0 {
		if avail, err := p.memAvailable(); err != nil || avail < ss.cfg.SpareMemory {
			return "not enough memory available"
		}
	}
	return ""
}

// claimLocked hands key's warm resume e to an Acquire with opts: the
// session if it is ready and was started with opts, else nil after
// marking it to stop (stop is then true; the caller stops it). Needs p.mu.
func (p *Pool) claimLocked(e *poolEntry, limit Limit, opts agent.Options) (s *agent.Session, stop bool) {
	so := e.s.Options()
	if !opts.Resume || so.SessionID != opts.SessionID || so.StateDir != opts.StateDir || so.ResumeStamp != opts.ResumeStamp ||
		!sameSpawn(so, opts) || !e.s.Alive() {
		e.stopping = true
		return nil, true
	}
	e.warmResume, e.ready, e.limit = false, false, limit
	bindServers(so.MCPServers, opts.MCPServers)
	p.fullCPU(e)
	e.s.Touch() // idle and LRU clocks start now
	p.notifyLocked()
	p.log.Info("agent: resumed conversation taken warm", "key", e.key, "profile", limit.Profile, "session", e.s.SessionID())
	return e.s, false
}

// warmResumeToYieldLocked marks and returns the least recently started
// ready warm resume of profile, to stop so that a conversation gets its
// slot, or nil. Needs p.mu.
func (p *Pool) warmResumeToYieldLocked(profile string) *poolEntry {
	var pick *poolEntry
	for _, e := range p.entries {
		if e.limit.Profile == profile && e.warmResume && e.ready && !e.stopping &&
			(pick == nil || e.s.LastActive().Before(pick.s.LastActive())) {
			pick = e
		}
	}
	if pick != nil && !pick.s.TryBeginStop("yielded") {
		return nil
	}
	if pick != nil {
		pick.stopping = true
	}
	return pick
}
