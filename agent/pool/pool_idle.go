package pool

import (
	"context"
	"time"
)

// janitor stops sessions that stayed idle longer than their IdleTimeout.
func (p *Pool) janitor() {
	for {
		sleep := p.reapIdle()
		p.mu.Lock()
		ch := p.changed
		p.mu.Unlock()
		timer := time.NewTimer(sleep)
		select {
		case <-p.stopJanitor:
			timer.Stop()
			return
		case <-timer.C:
		case <-ch:
			timer.Stop()
		}
	}
}

// reapIdle starts stopping every expired idle session and returns how long
// to sleep until the next one could expire.
func (p *Pool) reapIdle() time.Duration {
	now := time.Now()
	sleep := janitorMaxSleep
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return sleep
	}
	for _, e := range p.entries {
		if e.s == nil || e.stopping || e.claimed || e.limit.IdleTimeout <= 0 || e.s.Busy() {
			continue
		}
		left := e.limit.IdleTimeout - now.Sub(e.s.LastActive())
		if left > 0 {
			sleep = min(sleep, left)
			continue
		}
		if !e.s.TryBeginStop("idle") {
			continue
		}
		e.stopping = true
		s := e.s
		if e.spare != nil {
			p.log.Debug("agent: warm spare unused for the idle timeout: replacing it", "profile", e.limit.Profile, "idle_timeout", e.limit.IdleTimeout)
			p.tasks.Go(func() { p.dropSpare(e) })
			continue
		}
		p.log.Info("agent idle: stopping", "key", e.key, "profile", e.limit.Profile, "idle_timeout", e.limit.IdleTimeout)
		p.tasks.Go(func() {
			_ = s.Stop(context.Background(), "idle") // bounded by CloseGrace
		})
	}
	return max(sleep, 10*time.Millisecond)
}
