package config

import (
	"sync/atomic"
	"time"
)

// Source gives the config in force now. Readers call Current at each
// decision (who may talk, which rule applies, which budget holds) and keep
// the result no longer than that decision, so that a reload (see Live)
// applies to the next one. A *Config is a Source of itself: code that
// never reloads passes its Config.
type Source interface {
	Current() *Config
}

// Current implements Source: a static config is always current.
func (c *Config) Current() *Config { return c }

// Generation is one config the running bridge has applied.
type Generation struct {
	Config  *Config
	Number  uint64    // 1 for the config the bridge started with, then +1 per applied reload
	At      time.Time // when it took effect
	Trigger string    // what applied it: "start", "signal", "file", "request"
}

// Live is the running bridge's one current config: every reader consults
// it (Current) at its decision point, and a reload replaces it as a whole
// (Set), so a reader sees either the old or the new config, never a mix.
// It is safe for concurrent use. The zero value has no config.
type Live struct {
	cur atomic.Pointer[Generation]
}

var _ Source = (*Live)(nil)

// NewLive returns a Live holding cfg as generation 1, applied at at.
func NewLive(cfg *Config, at time.Time) *Live {
	l := &Live{}
	l.cur.Store(&Generation{Config: cfg, Number: 1, At: at, Trigger: "start"})
	return l
}

// Current implements Source.
func (l *Live) Current() *Config {
	if g := l.cur.Load(); g != nil {
		return g.Config
	}
	return nil
}

// Generation returns the generation in force (zero before NewLive).
func (l *Live) Generation() Generation {
	if g := l.cur.Load(); g != nil {
		return *g
	}
	return Generation{}
}

// Set makes cfg the current config, as the next generation, and returns
// it. Callers serialise their reloads (one reloader per bridge); Set
// itself is atomic.
func (l *Live) Set(cfg *Config, at time.Time, trigger string) Generation {
	g := &Generation{Config: cfg, Number: l.Generation().Number + 1, At: at, Trigger: trigger}
	l.cur.Store(g)
	return *g
}
