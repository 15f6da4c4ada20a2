package pool

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"sort"
	"sync"
	"time"

	"github.com/agentbridge/agentbridge/agent"
	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/internal/tasks"
)

// janitorMaxSleep bounds how long the idle janitor sleeps between checks.
const janitorMaxSleep = time.Second

// DefaultEvictMinIdle is Limit.EvictMinIdle when zero.
const DefaultEvictMinIdle = 2 * time.Second

// Limit is the policy of one agent profile, passed with every Acquire.
type Limit struct {
	Profile     string        // sessions are counted per profile
	MaxLive     int           // live processes of the profile at most; <= 0 = unlimited
	IdleTimeout time.Duration // stop a session idle (not Busy) this long; 0 = never
	// OnWait, if set, is called once by an Acquire that has to wait because
	// MaxLive processes are live and none is idle (so the caller can post a
	// visible "queued" notice). It must not block.
	OnWait func()
	// EvictMinIdle keeps a session that went idle less than this long ago
	// from being evicted: its user is likely to answer at once, and a
	// respawn (and resume) costs far more than a short wait. An Acquire
	// that finds only such sessions waits for the first to get old enough
	// (without OnWait). 0 = DefaultEvictMinIdle; negative = none.
	EvictMinIdle time.Duration
}

// evictMinIdle is EvictMinIdle with its default.
func (l Limit) evictMinIdle() time.Duration {
	if l.EvictMinIdle == 0 {
		return DefaultEvictMinIdle
	}
	return max(l.EvictMinIdle, 0)
}

// Pool keeps live sessions (agent.Session) by conversation key: at most MaxLive per
// profile, idle ones stopped after IdleTimeout, the least recently used
// idle one evicted when a profile is full. A Busy session (turn running,
// permission pending, background task) is never stopped by the pool.
//
// A profile may keep warm spares (KeepSpares): processes started and
// initialized ahead of time, counted against MaxLive, stopped first when a
// conversation needs their slot, and handed to new conversations by
// AcquireNew (see pool_spares.go).
//
// The pool does not persist anything and, apart from spares, does not pick
// session ids: the caller owns them. A session the pool stopped (Exit Reason "idle" or
// "evicted", Expected true) or that crashed (Expected false) is forgotten;
// the caller's next Acquire for that key spawns a new process and must
// pass agent.Options with Resume true and the same SessionID (and the same Home
// and Workdir) to continue the conversation. Resume only works once the
// CLI has written the conversation, i.e. after the first message.
//
// All methods are safe for concurrent use.
type Pool struct {
	log *slog.Logger

	mu      sync.Mutex
	entries map[string]*poolEntry // by key; spares under spareKeyPrefix+id
	spares  map[string]*spareSet  // by profile (KeepSpares)
	waiting map[string]int        // by profile: Acquires looking for a slot (spares keep off)
	changed chan struct{}         // closed and replaced whenever something changed
	closed  bool

	stopJanitor chan struct{}
	tasks       tasks.Group // janitor, monitors, background stops

	// boots holds a token per CLI booting (see takeBootSlot).
	boots chan struct{}

	// warm answers the warm spares' warm-up turns (SpareConfig.WarmUp);
	// started on first use. Guarded by mu.
	warm *warmModel

	// memAvailable reports the system's available memory in bytes
	// (SpareConfig.SpareMemory); tests replace it.
	memAvailable func() (int64, error)
}

// bootHold bounds how long one spawn holds its boot slot when the CLI
// shows no sign of having booted.
const bootHold = 10 * time.Second

// MaxBoots is how many CLI processes of a pool boot at once: a CLI takes
// most of a core for half a second to boot, and a burst of new or resumed
// conversations booting all at once would make each of them as slow as
// all of them together. At least 2, else the number of CPUs.
func MaxBoots() int { return max(2, runtime.NumCPU()) }

// poolEntry is one key's session. s is nil while it is being started.
type poolEntry struct {
	key      string
	limit    Limit
	s        *agent.Session
	stopping bool // the pool or Remove is stopping it

	// A warm spare until handed over (then spare is nil): see pool_spares.go.
	spare    *spareSet
	spareGen uint64 // spareSet.gen when the spare was started
	spareID  string
	ready    bool // the spare answered initialize; the warm resume is ready
	failed   bool // the spare's failure was counted
	began    time.Time
	// claimed: a new conversation waits for this spare, still booting
	// (see pool_spare_claim.go).
	claimed bool
	warmed  bool // the spare ran its warm-up turn or prewarm

	// warmResume: a conversation's session resumed ahead of its return
	// and not claimed yet (see pool_resume.go).
	warmResume bool
}

// New returns an empty pool and starts its idle janitor; Close stops it.
func New(logger *slog.Logger) *Pool {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	p := &Pool{
		log:         logger,
		entries:     map[string]*poolEntry{},
		spares:      map[string]*spareSet{},
		waiting:     map[string]int{},
		changed:     make(chan struct{}),
		stopJanitor: make(chan struct{}),
		boots:       make(chan struct{}, MaxBoots()),

		memAvailable: memAvailable,
	}
	p.tasks.Go(func() { p.janitor() })
	return p
}

// notifyLocked wakes everything waiting for a change. Needs p.mu.
func (p *Pool) notifyLocked() {
	close(p.changed)
	p.changed = make(chan struct{})
}

// notify is notifyLocked for callers without p.mu (the sessions' hook).
func (p *Pool) notify() {
	p.mu.Lock()
	p.notifyLocked()
	p.mu.Unlock()
}

// Acquire returns the live session of key, or starts one with opts (opts
// is ignored when a live session exists). When the profile already has
// limit.MaxLive live processes, it stops the least recently active idle
// session of the profile (Exit Reason "evicted") and takes its place; if
// every one is busy, it calls limit.OnWait once and waits until a slot
// frees up or ctx ends.
func (p *Pool) Acquire(ctx context.Context, key string, limit Limit, opts agent.Options) (*agent.Session, error) {
	told, counted := false, false
	defer func() {
		if counted {
			p.mu.Lock()
			p.waiting[limit.Profile]--
			p.notifyLocked() // the profile's spare keeper may go on
			p.mu.Unlock()
		}
	}()
	for {
		p.mu.Lock()
		if !counted && limit.MaxLive > 0 {
			counted = true // from now on the profile's spares stay out of freed slots
			p.waiting[limit.Profile]++
		}
		if p.closed {
			p.mu.Unlock()
			return nil, fmt.Errorf("acquire agent for %s: %w", key, ErrClosed)
		}
		if e, ok := p.entries[key]; ok {
			if e.warmResume && e.ready && !e.stopping {
				s, stop := p.claimLocked(e, limit, opts)
				p.mu.Unlock()
				if !stop {
					return s, nil
				}
				p.log.Info("agent: conversation resumed ahead of its return wants other options: restarting it", "key", key)
				_ = e.s.Stop(ctx, "replaced")
				p.forget(e)
				continue
			}
			if e.s != nil && !e.stopping && e.s.Alive() && !e.warmResume {
				p.mu.Unlock()
				return e.s, nil
			}
			// Starting, stopping or just exited: wait for it to settle.
			if err := p.waitLocked(ctx); err != nil {
				return nil, fmt.Errorf("acquire agent for %s: %w", key, err)
			}
			continue
		}
		if limit.MaxLive <= 0 || p.liveLocked(limit.Profile) < limit.MaxLive {
			e := &poolEntry{key: key, limit: limit}
			p.entries[key] = e
			p.mu.Unlock()
			return p.start(ctx, e, opts)
		}
		if spare := p.spareToYieldLocked(limit.Profile); spare != nil {
			p.mu.Unlock()
			p.log.Debug("agent pool full: a warm spare makes room", "profile", limit.Profile, "for", key)
			p.dropSpare(spare)
			p.forget(spare)
			continue
		}
		if wr := p.warmResumeToYieldLocked(limit.Profile); wr != nil {
			p.mu.Unlock()
			p.log.Info("agent pool full: a conversation resumed ahead of its return makes room", "profile", limit.Profile, "yielded", wr.key, "for", key)
			_ = wr.s.Stop(ctx, "yielded")
			p.forget(wr)
			continue
		}
		victim, soon := p.evictableLocked(limit.Profile, limit.evictMinIdle())
		if victim != nil {
			p.mu.Unlock()
			p.log.Info("agent pool full: evicting the least recently used idle session",
				"profile", limit.Profile, "max_live", limit.MaxLive, "evicted", victim.key, "for", key)
			_ = victim.s.Stop(ctx, "evicted")
			p.forget(victim)
			continue
		}
		if p.stoppingLocked(limit.Profile) || soon > 0 {
			// A slot is about to free up: no need to tell anyone.
			if err := p.waitLockedFor(ctx, soon); err != nil {
				return nil, fmt.Errorf("acquire agent for %s: %w", key, err)
			}
			continue
		}
		if !told {
			told = true
			p.log.Info("agent pool full and every session busy: waiting", "profile", limit.Profile, "max_live", limit.MaxLive, "key", key)
			if limit.OnWait != nil {
				p.mu.Unlock()
				limit.OnWait()
				continue
			}
		}
		if err := p.waitLocked(ctx); err != nil {
			return nil, fmt.Errorf("acquire agent for %s: wait for a free slot: %w", key, err)
		}
	}
}

// waitLocked releases p.mu and waits for the next change or ctx's end.
func (p *Pool) waitLocked(ctx context.Context) error { return p.waitLockedFor(ctx, 0) }

// waitLockedFor is waitLocked that also returns after d (when d > 0).
func (p *Pool) waitLockedFor(ctx context.Context, d time.Duration) error {
	ch := p.changed
	p.mu.Unlock()
	var timeout <-chan time.Time
	if d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case <-ch:
		return nil
	case <-timeout:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// takeBootSlot waits until fewer than MaxBoots CLIs of the pool boot, and
// takes a slot; bootedOrGone gives it back.
func (p *Pool) takeBootSlot(ctx context.Context) error {
	select {
	case p.boots <- struct{}{}:
		return nil
	default:
	}
	p.log.Debug("agent pool: waiting for a boot slot", "max_boots", cap(p.boots))
	select {
	case p.boots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-p.stopJanitor:
		return ErrClosed
	}
}

// bootedOrGone gives the boot slot taken for s back once s has booted (its
// first init or control response), exited, or held it for bootHold; a nil
// s (the start failed) gives it back at once.
func (p *Pool) bootedOrGone(s *agent.Session) {
	if s == nil {
		<-p.boots
		return
	}
	p.tasks.Go(func() {
		t := time.NewTimer(bootHold)
		defer t.Stop()
		select {
		case <-s.Booted():
		case <-s.Done():
		case <-t.C:
		}
		<-p.boots
	})
}

// start runs agent.Start for a reserved entry and registers the session.
func (p *Pool) start(ctx context.Context, e *poolEntry, opts agent.Options) (*agent.Session, error) {
	var s *agent.Session
	err := p.takeBootSlot(ctx)
	if err == nil {
		s, err = agent.Start(ctx, opts, p.log.With("key", e.key, "profile", e.limit.Profile))
		p.bootedOrGone(s)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	defer p.notifyLocked()
	if err != nil {
		delete(p.entries, e.key)
		return nil, fmt.Errorf("acquire agent for %s: %w", e.key, err)
	}
	e.s = s
	s.SetOnChange(p.notify)
	p.tasks.Go(func() { p.monitor(e) })
	if p.closed { // Close is waiting for this entry and will stop it
		return nil, fmt.Errorf("acquire agent for %s: %w", e.key, ErrClosed)
	}
	return s, nil
}

// monitor forgets e once its process has exited (stopped or crashed). A
// spare that was never handed over has no reader: monitor drains its
// events, counts an unexpected exit as a failure and removes its state.
func (p *Pool) monitor(e *poolEntry) {
	<-e.s.Done()
	p.mu.Lock()
	spare := e.spare != nil // a spare that died cannot be handed over any more
	unclaimed := e.warmResume
	p.mu.Unlock()
	if unclaimed { // nobody reads its events
		for range e.s.Events() {
		}
	}
	if spare {
		var ex streamjson.Exit
		for ev := range e.s.Events() {
			if x, ok := ev.(streamjson.Exit); ok {
				ex = x
			}
		}
		p.mu.Lock()
		p.spareGoneLocked(e, ex)
		if p.entries[e.key] == e { // with the failure counted, not after: SpareStatus stays consistent
			delete(p.entries, e.key)
			p.notifyLocked()
		}
		p.mu.Unlock()
		removeSpareState(e.s.Options(), p.log)
	}
	p.forget(e)
	p.log.Debug("agent pool: session gone", "key", e.key, "profile", e.limit.Profile, "spare", spare)
}

// forget removes e (if still registered) and wakes waiters.
func (p *Pool) forget(e *poolEntry) {
	p.mu.Lock()
	if p.entries[e.key] == e {
		delete(p.entries, e.key)
	}
	p.notifyLocked()
	p.mu.Unlock()
}

// stoppingLocked reports whether a session of profile is being stopped, or
// a spare being spawned (it can be stopped in a moment): a slot is about to
// free up.
func (p *Pool) stoppingLocked(profile string) bool {
	for _, e := range p.entries {
		if e.limit.Profile == profile && (e.stopping || e.spare != nil && e.s == nil || e.warmResume && !e.ready) {
			return true
		}
	}
	return false
}

// spareToYieldLocked marks and returns a spare of profile to stop so that a
// conversation gets its slot (one still starting first), or nil.
func (p *Pool) spareToYieldLocked(profile string) *poolEntry {
	var pick *poolEntry
	for _, e := range p.entries {
		if e.limit.Profile == profile && e.spare != nil && e.s != nil && !e.stopping && !e.claimed && (pick == nil || !e.ready) {
			pick = e
		}
	}
	if pick != nil {
		pick.stopping = true
		pick.s.BeginAbort("spare")
	}
	return pick
}

// liveLocked counts the processes of profile: running, starting or stopping.
func (p *Pool) liveLocked(profile string) int {
	n := 0
	for _, e := range p.entries {
		if e.limit.Profile == profile {
			n++
		}
	}
	return n
}

// evictableLocked marks and returns the least recently active idle session
// of profile that has been idle for minIdle, or nil and how soon one that is
// idle for less will be old enough (0 if none).
func (p *Pool) evictableLocked(profile string, minIdle time.Duration) (*poolEntry, time.Duration) {
	var cands []*poolEntry
	for _, e := range p.entries {
		if e.limit.Profile == profile && e.s != nil && !e.stopping && e.spare == nil && !e.warmResume {
			cands = append(cands, e)
		}
	}
	sort.Slice(cands, func(i, j int) bool { return cands[i].s.LastActive().Before(cands[j].s.LastActive()) })
	soon := time.Duration(0)
	for _, e := range cands {
		if left := minIdle - time.Since(e.s.LastActive()); left > 0 {
			if !e.s.Busy() && (soon == 0 || left < soon) {
				soon = left
			}
			continue
		}
		if e.s.TryBeginStop("evicted") {
			e.stopping = true
			return e, 0
		}
	}
	return nil, soon
}

// Get returns the live session of key, if any.
func (p *Pool) Get(key string) (*agent.Session, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	e, ok := p.entries[key]
	if !ok || e.s == nil || e.stopping || e.warmResume || !e.s.Alive() {
		return nil, false
	}
	return e.s, true
}

// Remove stops the session of key gracefully (Exit Reason "closed") and
// forgets it, waiting for the process to end (see agent.Session.Close). Removing
// a key without a session is a no-op.
func (p *Pool) Remove(ctx context.Context, key string) error {
	for {
		p.mu.Lock()
		e, ok := p.entries[key]
		if !ok {
			p.mu.Unlock()
			return nil
		}
		if e.s == nil { // still starting
			if err := p.waitLocked(ctx); err != nil {
				return fmt.Errorf("remove agent %s: %w", key, err)
			}
			continue
		}
		e.stopping = true
		s := e.s
		p.mu.Unlock()
		p.notify()
		err := s.Close(ctx)
		p.forget(e)
		if err != nil {
			return fmt.Errorf("remove agent %s: %w", key, err)
		}
		return nil
	}
}

// Len returns how many sessions the pool holds (live, starting or stopping).
func (p *Pool) Len() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.entries)
}

// Close stops every session gracefully (each Exit has Reason "closed" unless
// already stopping), waits for all processes to end or ctx to expire (then
// they are killed), and stops the janitor. Acquire fails with ErrClosed
// afterwards.
func (p *Pool) Close(ctx context.Context) error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	close(p.stopJanitor)
	p.notifyLocked()
	p.mu.Unlock()

	var stops sync.WaitGroup
	asked := map[*poolEntry]bool{}
	for {
		p.mu.Lock()
		if len(p.entries) == 0 {
			p.mu.Unlock()
			break
		}
		for _, e := range p.entries {
			if e.s != nil && !asked[e] {
				asked[e] = true
				e.stopping = true
				s := e.s
				stops.Add(1)
				if e.spare != nil {
					go func() { defer stops.Done(); p.dropSpare(e) }()
					continue
				}
				go func() { defer stops.Done(); _ = s.Stop(ctx, "closed") }()
			}
		}
		ch := p.changed
		p.mu.Unlock()
		<-ch // stop kills once ctx ends, so every entry goes away
	}
	stops.Wait()
	p.tasks.Close()
	p.mu.Lock()
	warm := p.warm
	p.mu.Unlock()
	if warm != nil {
		warm.close()
	}
	return nil
}
