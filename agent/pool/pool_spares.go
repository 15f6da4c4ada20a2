package pool

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/agentbridge/agentbridge/agent"
	"github.com/agentbridge/agentbridge/agent/sandbox"
	"github.com/agentbridge/agentbridge/agent/streamjson"
)

// Defaults for zero SpareConfig fields.
const (
	DefaultSpareMinBackoff  = time.Second
	DefaultSpareMaxBackoff  = 5 * time.Minute
	DefaultSpareInitTimeout = time.Minute
	DefaultSpareRefillWait  = 2 * time.Second
)

// sparePrewarmTimeout bounds a spare's prewarm: a CLI that does not
// answer it is ready all the same.
const sparePrewarmTimeout = 5 * time.Second

// spareKeyPrefix starts the pool key of a spare; no conversation key starts
// with a NUL byte.
const spareKeyPrefix = "\x00spare/"

// SpareConfig describes the warm spares of one agent profile (see
// Pool.KeepSpares).
type SpareConfig struct {
	// Limit is the profile's policy. Spares count against Limit.MaxLive
	// and never push out a conversation's session: a spare is spawned only
	// into a free slot, and the first to go when a conversation needs one.
	// A spare unused for Limit.IdleTimeout is stopped and replaced by a
	// fresh one. Limit.OnWait is not used.
	Limit Limit
	// Count is how many spares to keep; 0 keeps none (running ones stop).
	// Ignored with Auto.
	Count int
	// Auto makes the number of spares follow the recent arrival rate of
	// new conversations (AcquireNew calls) of the profile: the arrivals
	// expected while one spare boots, rounded up, at least 1 and at most
	// Max and Limit.MaxLive; it falls back once no spare was handed over
	// for ShrinkAfter (see autoSpares). A replacement waits for the first
	// turn of the spare handed over only as long as it still boots before
	// the next arrival needs it (at once when arrivals are frequent). A
	// spare starts only while the system has SpareMemory available (when
	// set).
	Auto bool
	// Max bounds the automatic count; default DefaultSpareMax.
	Max int
	// SpareMemory is the memory one spare may use, in bytes; 0 = no check.
	SpareMemory int64
	// ShrinkAfter: default DefaultSpareShrinkAfter.
	ShrinkAfter time.Duration
	// Options is how a spare is spawned: what a new conversation of the
	// profile would be spawned with. SessionID, Resume and StateDir are
	// ignored: each spare gets a fresh session id and, when StateRoot is
	// set, the state directory StateRoot/<session id>.
	Options   agent.Options
	StateRoot string
	// MinBackoff is the pause before the next spawn after a spare failed to
	// start or died; it doubles with each consecutive failure up to
	// MaxBackoff. Defaults DefaultSpareMinBackoff, DefaultSpareMaxBackoff.
	MinBackoff, MaxBackoff time.Duration
	// InitTimeout bounds a spare's start: spawn until its answer to
	// initialize. Default DefaultSpareInitTimeout.
	InitTimeout time.Duration
	// RefillWait bounds how long the replacement of a spare handed over
	// waits for that session's first turn to end (a booting CLI takes most
	// of a core for half a second, which the first turn would otherwise
	// share). Default DefaultSpareRefillWait.
	RefillWait time.Duration
	// NoPrewarm skips agent.Session.Prewarm: by default a spare that no
	// conversation waits for yet is prewarmed before it counts as ready.
	NoPrewarm bool
	// WarmUp gives each spare that no conversation waits for yet a
	// warm-up turn (agent.Session.WarmUp) against a local stand-in for the model
	// that the pool serves on 127.0.0.1, instead of Prewarm: its first real
	// turn then runs about as fast as a follow-up. Not for a profile whose
	// model requests might not follow ANTHROPIC_BASE_URL (a third-party
	// provider in its env or settings files); a warm-up that fails, or
	// whose request did not arrive at the local model, discards that spare
	// and turns warm-up turns off for the profile (SpareStatus.WarmUpOff).
	WarmUp bool
}

// spareWarmUpTimeout bounds a spare's warm-up turn.
const spareWarmUpTimeout = 30 * time.Second

// SpareStatus is what a profile's warm spares are doing.
type SpareStatus struct {
	Want     int // SpareConfig.Count, or the automatic target (Auto)
	Auto     bool
	Max      int  // the automatic count's bound (Auto): SpareConfig.Max within Limit.MaxLive
	MemShort bool // Auto: less than SpareConfig.SpareMemory available, no spare starts
	Ready    int  // started, initialized and waiting for a conversation
	Starting int  // spawned, initialize not answered yet
	// Failures counts the consecutive spares that failed to start or died
	// unused; it is reset when a spare is handed over or stopped by the
	// pool in good health. With Failures > 0 and Ready == 0 the profile is
	// failing (a bad command, bad flags, a crash-looping CLI): LastError
	// says why and no spawn happens before NextAttempt.
	Failures    int
	LastError   string
	NextAttempt time.Time
	// WarmUpOff says why spares get no warm-up turn although the config
	// asks for it ("" = they do, or it was not asked for).
	WarmUpOff string
}

// spareSet is the pool's state for one profile's spares. Guarded by Pool.mu.
type spareSet struct {
	cfg       SpareConfig
	failures  int
	lastErr   string
	notBefore time.Time
	decided   uint64 // how often the keeper decided what to do (tests wait for it)
	// gen counts the changes of cfg.Options (a reloaded profile): spares
	// of an older generation are stale, trimmed and replaced.
	gen uint64
	// handed is the spare handed over last, at handedAt: its replacement
	// waits until its first turn is done (at most cfg.RefillWait), so that
	// the replacement's boot does not slow that turn down.
	handed   *agent.Session
	handedAt time.Time
	// handedCold: the spare handed over last skipped its warm-up turn (it
	// was claimed while booting): its first turn runs JavaScript for the
	// first time and gets the cores to itself, up to RefillWait, however
	// frequent the arrivals.
	handedCold bool
	// warmUpOff is why warm-up turns are off for the profile: set when one
	// failed or its request went elsewhere. warmUpBlocked is why the last
	// spare went without one (warmUpBlocker), checked again for each spare.
	warmUpOff, warmUpBlocked string
	// auto is the controller of an automatic count (cfg.Auto); memShort
	// says the last spawn was held back for want of memory.
	auto     autoSpares
	memShort bool
}

func (c SpareConfig) withDefaults() SpareConfig {
	if c.MinBackoff <= 0 {
		c.MinBackoff = DefaultSpareMinBackoff
	}
	if c.MaxBackoff <= 0 {
		c.MaxBackoff = DefaultSpareMaxBackoff
	}
	c.MaxBackoff = max(c.MaxBackoff, c.MinBackoff)
	if c.InitTimeout <= 0 {
		c.InitTimeout = DefaultSpareInitTimeout
	}
	if c.RefillWait <= 0 {
		c.RefillWait = DefaultSpareRefillWait
	}
	c.Count = max(c.Count, 0)
	if c.Max <= 0 {
		c.Max = DefaultSpareMax
	}
	if c.ShrinkAfter <= 0 {
		c.ShrinkAfter = DefaultSpareShrinkAfter
	}
	return c
}

// bootsOnLeftoverCPU reports whether c's spares boot with spareCPU of the
// profile's CPU share: the profile has one and its cgroups enforce it.
func (c SpareConfig) bootsOnLeftoverCPU() bool {
	o := c.Options
	if o.Cgroups == nil || o.Limits.CPU <= 0 {
		return false
	}
	return slices.Contains(o.Cgroups.Enforcement(sandbox.Limits{CPU: o.Limits.CPU}).Enforced, sandbox.LimitCPU)
}

// KeepSpares makes the pool keep cfg.Count warm spares of the profile
// cfg.Limit.Profile: CLI processes spawned ahead of time with cfg.Options
// and a fresh session id each, sent initialize at once and counted as ready
// only once they answered. AcquireNew hands a ready spare to a new
// conversation, and a replacement is spawned in the background: never more
// than one spawn at a time per profile. A spare that fails to start or dies
// is replaced after a back-off that doubles per consecutive failure (see
// SpareStatus), so a broken command is a logged error, not a spawn storm.
// Calling KeepSpares again for the same profile replaces its config (Count
// 0 stops its spares). Spares are stopped by Close.
func (p *Pool) KeepSpares(cfg SpareConfig) {
	cfg = cfg.withDefaults()
	profile := cfg.Limit.Profile
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	if ss, ok := p.spares[profile]; ok {
		if !sameSpawn(ss.cfg.Options, cfg.Options) {
			ss.gen++ // the spares started so far would never be handed out
		}
		ss.cfg = cfg
		p.notifyLocked()
		return
	}
	ss := &spareSet{cfg: cfg}
	p.spares[profile] = ss
	p.tasks.Go(func() { p.keepSpares(ss) })
}

// SpareStatus reports the warm spares of profile (the zero value when the
// profile keeps none).
func (p *Pool) SpareStatus(profile string) SpareStatus {
	p.mu.Lock()
	defer p.mu.Unlock()
	ss, ok := p.spares[profile]
	if !ok {
		return SpareStatus{}
	}
	st := SpareStatus{Want: ss.wantLocked(time.Now()), Failures: ss.failures, LastError: ss.lastErr}
	if ss.cfg.Auto {
		st.Auto, st.MemShort, st.Max = true, ss.memShort, ss.cfg.Max
		if m := ss.cfg.Limit.MaxLive; m > 0 {
			st.Max = min(st.Max, m)
		}
	}
	if ss.cfg.WarmUp {
		st.WarmUpOff = cmp.Or(ss.warmUpOff, ss.warmUpBlocked)
	}
	if ss.failures > 0 {
		st.NextAttempt = ss.notBefore
	}
	for _, e := range p.entries {
		if e.spare != ss || e.stopping || e.claimed {
			continue
		}
		if e.ready {
			st.Ready++
		} else {
			st.Starting++
		}
	}
	return st
}

// AcquireNew starts a new session for key (opts.Resume must be false). If
// the profile keeps warm spares whose spawn options equal opts (apart from
// SessionID and StateDir) and one is ready, it is handed to key at once.
// The returned session's SessionID (and state directory) is then the
// spare's, not opts.SessionID, and the caller must record it before the
// first Send. Without a ready spare it takes the matching spare still
// booting that began first, if any, and waits for it (without its warm-up
// turn if that has not begun; see pool_spare_claim.go); otherwise, or when
// that spare fails or takes more than twice the spares' boot time,
// AcquireNew is Acquire with opts: a cold spawn at once, or key's live
// session if it has one. Every call counts as an arrival for the profile's
// adaptive spare count (SpareConfig.Auto).
func (p *Pool) AcquireNew(ctx context.Context, key string, limit Limit, opts agent.Options) (*agent.Session, error) {
	if opts.Resume {
		return nil, fmt.Errorf("acquire new agent for %s: options resume a session", key)
	}
	s, claimed := p.takeSpare(key, limit, opts)
	if s != nil {
		return s, nil
	}
	if claimed != nil {
		if s := p.awaitClaimed(ctx, claimed.spare, claimed, key, limit, opts); s != nil {
			return s, nil
		}
	}
	return p.Acquire(ctx, key, limit, opts)
}

// takeSpare hands a ready spare matching opts to key; without one, it
// claims a matching spare still booting (see pool_spare_claim.go) for the
// caller to wait for. Both are nil when there is neither.
func (p *Pool) takeSpare(key string, limit Limit, opts agent.Options) (*agent.Session, *poolEntry) {
	p.mu.Lock()
	defer p.mu.Unlock()
	ss := p.spares[limit.Profile]
	if ss == nil || p.closed || p.entries[key] != nil {
		return nil, nil
	}
	ss.auto.arrive(time.Now())
	p.notifyLocked() // the keeper may want more spares now
	if !sameSpawn(ss.cfg.Options, opts) {
		return nil, nil
	}
	var best *poolEntry
	for _, e := range p.entries {
		if e.spare == ss && e.ready && !e.stopping && !e.claimed && e.spareGen == ss.gen && e.s.Alive() &&
			(best == nil || e.s.LastActive().After(best.s.LastActive())) {
			best = e
		}
	}
	if best == nil {
		return nil, p.claimBootingLocked(ss)
	}
	s := p.handOverLocked(ss, best, key, limit)
	bindServers(s.Options().MCPServers, opts.MCPServers)
	return s, nil
}

// handOverLocked gives spare e to key. Needs p.mu.
func (p *Pool) handOverLocked(ss *spareSet, e *poolEntry, key string, limit Limit) *agent.Session {
	delete(p.entries, e.key)
	e.key, e.limit, e.spare, e.ready = key, limit, nil, false
	p.entries[key] = e
	ss.failures = 0 // it lived until it was needed
	e.s.Touch()     // idle and LRU clocks start now, not at its spawn
	ss.handed, ss.handedAt, ss.handedCold = e.s, time.Now(), e.claimed && !e.warmed
	p.fullCPU(e)
	ss.auto.used(ss.handedAt)
	p.notifyLocked()
	p.log.Info("agent: warm spare handed over", "key", key, "profile", limit.Profile, "session", e.s.SessionID())
	return e.s
}

// keepSpares is the goroutine that keeps ss's spares: into free slots
// only, paced by the back-off, one start at a time (with Auto as many as
// CLIs may boot at once, MaxBoots: two boots on two cores take hardly
// longer than one); it also stops spares beyond the wanted count. It
// returns when the pool closes.
func (p *Pool) keepSpares(ss *spareSet) {
	for {
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			return
		}
		e, trim, wait := p.nextSpareLocked(ss)
		ch := p.changed
		p.mu.Unlock()
		switch {
		case trim != nil:
			p.dropSpare(trim)
		case e != nil:
			p.tasks.Go(func() { p.startSpare(ss, e) })
		default:
			if wait <= 0 {
				wait = time.Hour // until the next change
			}
			t := time.NewTimer(wait)
			select {
			case <-ch:
			case <-t.C:
			case <-p.stopJanitor:
				t.Stop()
				return
			}
			t.Stop()
		}
	}
}

// nextSpareLocked decides the spare keeper's next step: a spare to trim
// (marked stopping), a reserved entry to start, or how long to wait (0 =
// until the next change). Needs p.mu.
func (p *Pool) nextSpareLocked(ss *spareSet) (start, trim *poolEntry, wait time.Duration) {
	ss.decided++
	profile := ss.cfg.Limit.Profile
	now := time.Now()
	want := ss.wantLocked(now)
	shrink := time.Duration(0)
	if ss.cfg.Auto {
		shrink = ss.auto.shrinkIn(now, ss.cfg.ShrinkAfter)
	}
	have := 0
	var surplus *poolEntry
	for _, e := range p.entries {
		if e.spare != ss || e.stopping || e.claimed {
			continue
		}
		if e.spareGen != ss.gen {
			if e.s != nil {
				e.stopping = true // stale: spawned with options the profile no longer has
				return nil, e, 0
			}
			continue
		}
		have++
		if e.s != nil && (surplus == nil || !e.ready) {
			surplus = e // prefer one that is not ready yet
		}
	}
	switch {
	case have > want && surplus != nil:
		surplus.stopping = true
		return nil, surplus, 0
	case have >= want, p.waiting[profile] > 0, ss.cfg.Limit.MaxLive > 0 && p.liveLocked(profile) >= ss.cfg.Limit.MaxLive:
		return nil, nil, shrink
	}
	starting, most := 0, 1
	if ss.cfg.Auto {
		most = cap(p.boots)
	}
	for _, e := range p.entries {
		if e.spare == ss && !e.stopping && (!e.ready || e.claimed) {
			starting++ // claimed ones too until handed over: they still boot
			if e.claimed {
				most = 1 // a conversation waits for that boot: no other beside it
			}
		}
	}
	if starting >= most {
		return nil, nil, shrink // the next start when one of these is done
	}
	if left := time.Until(ss.notBefore); left > 0 {
		return nil, nil, left
	}
	if left := p.refillWaitLocked(ss, now); left > 0 {
		return nil, nil, left
	}
	if ss.memShort = p.memoryShortLocked(ss, starting); ss.memShort {
		return nil, nil, memoryRecheck
	}
	id := uuid.NewString()
	e := &poolEntry{key: spareKeyPrefix + id, limit: ss.cfg.Limit, spare: ss, spareID: id, spareGen: ss.gen, began: now}
	p.entries[e.key] = e
	return e, nil, 0
}

// refillWaitLocked is how long the keeper should still wait before it
// spawns the replacement of the spare handed over last: until that
// session's first turn is done, at most cfg.RefillWait after the
// hand-over; with Auto, only as long as the replacement still boots before
// the arrival expected once the ready spares are used (autoSpares.
// refillBudget). Not at all when the replacement boots on leftover CPU (a
// cgroup CPU share, see spareCPU) and the spare handed over was warm: the
// boot then takes only what that turn leaves over, and starting it at once
// has the next spare ready sooner. The session's changes wake the keeper.
// Needs p.mu.
func (p *Pool) refillWaitLocked(ss *spareSet, now time.Time) time.Duration {
	if ss.handed == nil {
		return 0
	}
	if !ss.handedCold && ss.cfg.bootsOnLeftoverCPU() {
		ss.handed = nil
		return 0
	}
	wait := ss.cfg.RefillWait
	if ss.cfg.Auto && !ss.handedCold {
		ready := 0
		for _, e := range p.entries {
			if e.spare == ss && e.ready && !e.stopping && !e.claimed {
				ready++
			}
		}
		wait = ss.auto.refillBudget(now, wait, ready)
	}
	left := wait - now.Sub(ss.handedAt)
	if left <= 0 || ss.handed.FirstTurnDone() {
		ss.handed = nil
		return 0
	}
	return left
}

// spareOptions are the spawn options of a spare with session id id.
func (ss *spareSet) spareOptions(id string) agent.Options {
	opts := ss.cfg.Options
	opts.SessionID, opts.Resume, opts.StateDir = id, false, ""
	opts.StartCPU = spareCPU                       // until a conversation takes it (fullCPU)
	opts.MCPServers = lateServers(opts.MCPServers) // bound to the conversation's servers at hand-over
	if ss.cfg.StateRoot != "" {
		opts.StateDir = filepath.Join(ss.cfg.StateRoot, id)
	}
	return opts
}

// spareFailedLocked records that spare e failed (once per spare) and pushes
// the next spawn back. Needs p.mu.
func (p *Pool) spareFailedLocked(ss *spareSet, e *poolEntry, err error, stderr string) {
	if e.failed {
		return
	}
	e.failed = true
	ss.failures++
	backoff := ss.cfg.MinBackoff << min(ss.failures-1, 30)
	if backoff <= 0 || backoff > ss.cfg.MaxBackoff {
		backoff = ss.cfg.MaxBackoff
	}
	ss.notBefore = time.Now().Add(backoff)
	ss.lastErr = err.Error()
	if stderr != "" {
		ss.lastErr += ": " + agent.LastLine(stderr)
	}
	msg := "agent: warm spare failed; retrying after a back-off"
	if ss.failures >= 3 {
		msg = "agent: warm spares keep failing (check the profile's command, args and environment); retrying after a back-off"
	}
	p.log.Error(msg, "profile", ss.cfg.Limit.Profile, "failures", ss.failures, "retry_in", backoff,
		"err", err, "stderr_tail", stderr)
}

// spareGoneLocked handles the exit of a spare that was never handed over:
// an exit the pool did not ask for is a failure. Needs p.mu.
func (p *Pool) spareGoneLocked(e *poolEntry, ex streamjson.Exit) {
	ss := e.spare
	switch {
	case !e.stopping:
		p.spareFailedLocked(ss, e, fmt.Errorf("spare %s exited (%s, code %d)", e.spareID, ex.Reason, ex.Code), ex.StderrTail)
	case e.ready && !e.failed:
		ss.failures = 0 // healthy until the pool stopped it
	}
}

// dropSpare stops a spare at once (it holds no conversation: nothing to
// save) and waits for it; its monitor cleans up.
func (p *Pool) dropSpare(e *poolEntry) {
	p.mu.Lock()
	s := e.s
	p.mu.Unlock()
	if s == nil {
		return
	}
	s.Abort("spare")
}

// removeSpareState deletes the private state directory of a spare that
// never served a conversation.
func removeSpareState(opts agent.Options, log interface {
	Warn(msg string, args ...any)
}) {
	if opts.StateDir == "" {
		return
	}
	if err := os.RemoveAll(opts.StateDir); err != nil {
		log.Warn("agent: unused spare state not removed", "dir", opts.StateDir, "err", err)
	}
}
