package agent

import "time"

// What a pool of sessions (agent/pool) needs beyond the conversation's own
// methods: the spawn options, the boot signal, and stops that skip the
// graceful close.

// Options returns the options the session was started with, defaults
// filled in (see Options.Normalized).
func (s *Session) Options() Options { return s.opts }

// Started is when the process was spawned.
func (s *Session) Started() time.Time { return s.started }

// Booted is closed once the CLI has shown it booted (its first init or
// control response); it stays open if the process exits before.
func (s *Session) Booted() <-chan struct{} { return s.booted }

// BeginAbort marks s as stopping for reason (the first reason wins)
// without waiting: Send fails with ErrClosed from now on.
func (s *Session) BeginAbort(reason string) {
	s.mu.Lock()
	if s.reason == "" && !s.st.exited {
		s.reason = reason
	}
	s.closing = true
	s.mu.Unlock()
}

// Abort stops the session at once for reason, without the graceful close
// (for a process that holds no conversation yet: nothing to save), and
// returns once the Exit event is queued.
func (s *Session) Abort(reason string) {
	s.BeginAbort(reason)
	s.kill()
	<-s.done
}
