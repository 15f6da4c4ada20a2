package pool

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/agentbridge/agentbridge/agent"
)

// startSpare spawns the reserved spare e and waits for its answer to
// initialize; it runs on the spare keeper, so spawns never overlap.
func (p *Pool) startSpare(ss *spareSet, e *poolEntry) {
	p.mu.Lock()
	opts, timeout := ss.spareOptions(e.spareID), ss.cfg.InitTimeout
	p.mu.Unlock()
	log := p.log.With("profile", e.limit.Profile) // the session keeps it after a hand-over
	began := time.Now()
	s := p.spawnSpare(ss, e, opts, log)
	if s == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	err := s.Initialize(ctx)
	if err == nil && !p.warmSpare(ctx, ss, e, s, opts, log) {
		cancel()
		return
	}
	cancel()
	p.spareStarted(ss, e, s, err, began, log)
}

// spawnSpare starts the spare e's process within a boot slot and
// monitors it; it returns nil, with e forgotten, when it could not.
func (p *Pool) spawnSpare(ss *spareSet, e *poolEntry, opts agent.Options, log *slog.Logger) *agent.Session {
	var s *agent.Session
	err := p.takeBootSlot(context.Background())
	if err == nil {
		s, err = agent.Start(context.Background(), opts, log)
		p.bootedOrGone(s)
	}
	if err != nil {
		p.mu.Lock()
		delete(p.entries, e.key)
		if !errors.Is(err, ErrClosed) {
			p.spareFailedLocked(ss, e, err, "")
		}
		p.notifyLocked()
		p.mu.Unlock()
		removeSpareState(opts, log)
		return nil
	}
	p.mu.Lock()
	e.s = s
	if e.claimed {
		p.fullCPU(e)
	}
	s.SetOnChange(p.notify)
	p.tasks.Go(func() { p.monitor(e) })
	p.notifyLocked() // Close and Acquire may be waiting for this entry
	p.mu.Unlock()
	return s
}

// warmSpare gives the initialized spare s its warm-up turn (profile
// warm_up, unless something in opts blocks it or an earlier one failed)
// or else its prewarm, within ctx. It reports false when the warm-up
// turn failed: s is then being dropped and never handed over.
func (p *Pool) warmSpare(ctx context.Context, ss *spareSet, e *poolEntry, s *agent.Session, opts agent.Options, log *slog.Logger) bool {
	p.mu.Lock()
	prewarm := !ss.cfg.NoPrewarm
	warmUp := ss.cfg.WarmUp && ss.warmUpOff == ""
	claimed := e.claimed
	p.mu.Unlock()
	if claimed {
		return true // a conversation waits for it: its own first turn warms it
	}
	defer func() {
		p.mu.Lock()
		e.warmed = true
		p.mu.Unlock()
	}()
	if warmUp {
		why := warmUpBlocker(opts)
		p.mu.Lock()
		if why != "" && ss.warmUpBlocked == "" {
			log.Info("agent: warm spares get no warm-up turn", "why", why)
		}
		ss.warmUpBlocked = why
		p.mu.Unlock()
		warmUp = why == ""
	}
	if warmUp {
		if werr := p.warmUpSpare(ctx, s, opts, log); werr != nil {
			p.mu.Lock()
			defer p.mu.Unlock()
			if ss.warmUpOff == "" && !e.stopping && !errors.Is(werr, ErrClosed) {
				ss.warmUpOff = werr.Error()
				log.Warn("agent: warm spare's warm-up turn failed; this profile's spares go without from now on", "session", s.SessionID(), "err", werr)
			}
			// The session may still point at the local model or hold the
			// warm-up turn: never hand it over. Not a spare failure: the
			// next one starts at once, without a warm-up turn.
			e.stopping = true
			p.tasks.Go(func() { p.dropSpare(e) })
			return false
		}
		prewarm = false // the warm-up turn did more than a prewarm does
	}
	if prewarm {
		pctx, pcancel := context.WithTimeout(ctx, sparePrewarmTimeout)
		perr := s.Prewarm(pctx)
		pcancel()
		if perr != nil {
			log.Debug("agent: warm spare's prewarm failed; it is ready all the same", "session", s.SessionID(), "err", perr)
		}
	}
	return true
}

// spareStarted records how the start of the spare e (session s, begun
// at began) ended: ready when its initialization (and warming) succeeded
// (err nil), else a failure, and the spare dropped.
func (p *Pool) spareStarted(ss *spareSet, e *poolEntry, s *agent.Session, err error, began time.Time, log *slog.Logger) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case e.stopping || e.spare != ss:
		// Stopped to make room, trimmed or closed meanwhile: not a failure.
	case err == nil:
		e.ready = true
		p.notifyLocked()
		boot := time.Since(began)
		if !e.claimed { // a claimed spare may have skipped its warm-up: not a boot time to expect
			ss.auto.booted(boot)
		}
		log.Debug("agent: warm spare ready", "session", s.SessionID(), "startup", boot)
	case errors.Is(err, agent.ErrClosed):
		// The process died: monitor counts the failure with its stderr.
	default:
		p.spareFailedLocked(ss, e, err, "")
		e.stopping = true
		s.BeginAbort("spare")
		p.tasks.Go(func() { p.dropSpare(e) })
	}
}
