package schedule

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core"
	"github.com/agentbridge/agentbridge/bridges/core/render"
	"github.com/agentbridge/agentbridge/bridges/core/worker"
	"github.com/agentbridge/agentbridge/bridges/core/worker/timer"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/config/schedules"
	"github.com/agentbridge/agentbridge/store"
)

// scheduleScanWindow bounds how far back the scheduler looks for missed
// firings: only the latest one runs anyway.
const scheduleScanWindow = 8 * 24 * time.Hour

// scheduleRetry is how soon a firing that failed (a database or platform
// error) is tried again; the delay doubles per attempt, and after
// scheduleAttempts failures the firing is given up (recorded as skipped).
const (
	scheduleRetry    = time.Minute
	scheduleAttempts = 4
)

// Scheduler fires the stored schedules (core.Scheduler). Its loop runs in
// Core.Run: it handles every due firing, then sleeps on the core's clock
// until the next one or until the schedules change (Wake). A firing
// starts its run through the core (core.ScheduleRuns), whose one entry
// point records it.
//
// A firing is due when its time lies between the schedule's last handled
// firing (store.Schedule.LastFireAt) and now. Of several due firings of one
// schedule only the latest runs (a bridge that was down for a week runs a
// daily schedule once, not seven times); one due before the loop started
// was missed while the bridge was down, and runs only with catch_up. A
// firing whose previous run's ledger message is not finished is skipped
// and said so in that run's conversation.
type Scheduler struct {
	cfg     config.Source
	st      *store.Store
	clock   worker.Clock
	log     *slog.Logger
	metrics Counter
	claim   func(ctx context.Context, firing string) (bool, error)

	wake chan struct{} // capacity 1: a pending wake-up

	mu       sync.Mutex
	crons    map[[2]string]schedules.Cron // parsed (expr, tz): loading a zone reads tzdata
	failures map[int64]fireFailure        // by schedule id: the firing that keeps failing
}

// fireFailure counts the failed attempts at one firing of a schedule.
type fireFailure struct {
	due      time.Time
	attempts int
}

var _ core.Scheduler = (*Scheduler)(nil)

// Counter counts the outcomes of firings (metrics.Metrics is one; nil-safe).
type Counter interface {
	ScheduleFiring(bot, outcome string)
}

// Options configure a Scheduler.
type Options struct {
	Config  config.Source // required: the config file's schedules (read by each Sync)
	Store   *store.Store  // required: the stored schedules and their runs
	Clock   worker.Clock  // the core's clock (default the real one)
	Logger  *slog.Logger  // default discards
	Metrics Counter       // may be nil
	// Claim, when set, claims each firing ("schedule:<id>:<unix due>")
	// before anything is done for it; a firing claimed elsewhere is left
	// to the claimer. Replicas set it (bridges/features/replica) so that every
	// firing happens on exactly one of them; nil: this process fires all.
	Claim func(ctx context.Context, firing string) (bool, error)
}

// New returns a scheduler; nothing fires until Run.
func New(o Options) *Scheduler {
	if o.Clock == nil {
		o.Clock = worker.RealClock()
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return &Scheduler{cfg: o.Config, st: o.Store, clock: o.Clock, log: o.Logger, metrics: o.Metrics,
		claim: o.Claim, wake: make(chan struct{}, 1), crons: make(map[[2]string]schedules.Cron), failures: make(map[int64]fireFailure)}
}

// count counts a firing's outcome.
func (s *Scheduler) count(bot, outcome string) {
	if s.metrics != nil {
		s.metrics.ScheduleFiring(bot, outcome)
	}
}

// failed records a failed attempt at the firing of schedule id due at due
// and returns how long to wait before the next one, or 0 when it is time
// to give up.
func (s *Scheduler) failed(id int64, due time.Time) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	f := s.failures[id]
	if !f.due.Equal(due) {
		f = fireFailure{due: due}
	}
	f.attempts++
	if f.attempts >= scheduleAttempts {
		delete(s.failures, id)
		return 0
	}
	s.failures[id] = f
	return scheduleRetry << (f.attempts - 1)
}

// succeeded forgets the failures of schedule id.
func (s *Scheduler) succeeded(id int64) {
	s.mu.Lock()
	delete(s.failures, id)
	s.mu.Unlock()
}

// maxCachedCrons bounds the parsed-cron cache (it is emptied when full).
const maxCachedCrons = 4096

// parse is schedules.ParseCron with a cache.
func (s *Scheduler) parse(expr, tz string) (schedules.Cron, error) {
	k := [2]string{expr, tz}
	s.mu.Lock()
	defer s.mu.Unlock()
	if c, ok := s.crons[k]; ok {
		return c, nil
	}
	c, err := schedules.ParseCron(expr, tz)
	if err != nil {
		return c, err
	}
	if len(s.crons) >= maxCachedCrons {
		clear(s.crons)
	}
	s.crons[k] = c
	return c, nil
}

// Wake implements core.Scheduler: the scheduler looks at the schedules
// again (one was added or removed). It never blocks.
func (s *Scheduler) Wake() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Sync implements core.Scheduler: it stores the config file's schedules
// (see schedstore.Store.SyncConfigSchedules); new or re-timed ones count from now.
func (c *Scheduler) Sync(ctx context.Context) error {
	cfg := c.cfg.Current()
	defs := make([]store.Schedule, 0, len(cfg.Schedules))
	now := c.clock.Now()
	for _, s := range cfg.Schedules {
		defs = append(defs, store.Schedule{
			Name: s.Name, Key: store.ConversationKey{Bot: s.Bot, Channel: s.Channel, Thread: s.Thread}, NewThread: s.NewThread,
			Cron: s.Cron.Expr, TZ: s.Cron.Zone, Prompt: s.Prompt, Agent: s.Agent, CatchUp: s.CatchUp, LastFireAt: now,
		})
	}
	added, updated, removed, err := c.st.SyncConfigSchedules(ctx, defs)
	if err != nil {
		return err
	}
	if added+updated+removed > 0 {
		c.log.Info("config schedules stored", "added", added, "updated", updated, "removed", removed)
	}
	return nil
}

// Run implements core.Scheduler: the scheduler loop, firing through runs;
// it returns when ctx ends.
func (c *Scheduler) Run(ctx context.Context, runs core.ScheduleRuns) {
	started := c.clock.Now()
	for {
		next := c.fireDue(ctx, runs, started)
		var timer timer.Timer
		if !next.IsZero() {
			wait := next.Sub(c.clock.Now())
			if wait <= 0 { // the time came while firing
				continue
			}
			timer = c.clock.AfterFunc(wait, c.Wake)
		}
		select {
		case <-ctx.Done():
		case <-c.wake:
		}
		if timer != nil {
			timer.Stop()
		}
		if ctx.Err() != nil {
			return
		}
	}
}

// fireDue handles every due firing and returns when the next one is due
// (zero: none).
func (c *Scheduler) fireDue(ctx context.Context, runs core.ScheduleRuns, started time.Time) time.Time {
	all, err := c.st.ActiveSchedules(ctx)
	if err != nil {
		if ctx.Err() == nil {
			c.log.Error("read schedules; retrying", "err", err)
			return c.clock.Now().Add(scheduleRetry)
		}
		return time.Time{}
	}
	var next time.Time
	for _, sc := range all {
		if ctx.Err() != nil {
			return time.Time{}
		}
		log := c.log.With("schedule", sc.ID, "name", sc.Name)
		cr, err := c.parse(sc.Cron, sc.TZ)
		if err != nil {
			log.Error("stored schedule cannot be parsed; it never runs", "err", err)
			continue
		}
		now := c.clock.Now()
		base := sc.LastFireAt
		if base.IsZero() {
			base = sc.CreatedAt
		}
		due := latestDue(cr, base, now)
		after := base
		if !due.IsZero() {
			err := c.fire(ctx, runs, sc, due, due.Before(started), log)
			switch {
			case err == nil:
				c.succeeded(sc.ID)
			case ctx.Err() != nil:
				return time.Time{}
			default:
				c.count(sc.Key.Bot, "failed")
				if wait := c.failed(sc.ID, due); wait > 0 {
					log.Error("schedule firing failed; retrying", "due", due, "retry_in", wait, "err", err)
					next = earliest(next, now.Add(wait))
					continue
				}
				log.Error("schedule firing failed; giving it up", "due", due, "attempts", scheduleAttempts, "err", err)
				if err := c.st.RecordScheduleSkip(ctx, sc.ID, due); err != nil {
					log.Error("record the given-up firing", "err", err)
					next = earliest(next, now.Add(scheduleRetry))
					continue
				}
			}
			after = due
		}
		next = earliest(next, cr.Next(later(after, now)))
	}
	return next
}

// latestDue returns the latest firing of cr after base and at or before
// now, or zero.
func latestDue(cr schedules.Cron, base, now time.Time) time.Time {
	if from := now.Add(-scheduleScanWindow); base.Before(from) {
		base = from
	}
	var due time.Time
	for t := cr.Next(base); !t.IsZero() && !t.After(now); t = cr.Next(t) {
		due = t
	}
	return due
}

func earliest(a, b time.Time) time.Time {
	switch {
	case b.IsZero():
		return a
	case a.IsZero() || b.Before(a):
		return b
	}
	return a
}

// fire handles the firing of sc at due: skipped when missed without
// catch_up or when the previous run is unfinished, else run. It returns
// an error only when the firing should be tried again.
func (c *Scheduler) fire(ctx context.Context, runs core.ScheduleRuns, sc store.Schedule, due time.Time, missed bool, log *slog.Logger) error {
	if c.claim != nil {
		mine, err := c.claim(ctx, fmt.Sprintf("schedule:%d:%d", sc.ID, due.Unix()))
		if err != nil {
			return fmt.Errorf("claim the firing: %w", err)
		}
		if !mine {
			log.Debug("scheduled run handled by another replica", "due", due)
			return nil
		}
	}
	if missed && !sc.CatchUp {
		log.Info("scheduled run missed while the bridge was down; skipped (catch_up is off)", "due", due)
		c.count(sc.Key.Bot, "skipped_missed")
		return c.st.RecordScheduleSkip(ctx, sc.ID, due)
	}
	if prev, running, err := c.previousRunGoing(ctx, sc); err != nil {
		return err
	} else if running {
		log.Info("scheduled run skipped: the previous run has not finished", "due", due, "previous", sc.LastInboxID)
		c.count(sc.Key.Bot, "skipped_overlap")
		if err := c.st.RecordScheduleSkip(ctx, sc.ID, due); err != nil {
			return err
		}
		post(ctx, runs, bridges.ConversationKey(prev.Key), "⏭ Skipped a scheduled run of "+render.CodeSpan(sc.Name)+
			" due "+due.In(c.cronLoc(sc)).Format("Mon 15:04 MST")+": the previous run has not finished.", log)
		return nil
	}
	inboxID, err := c.startRun(ctx, runs, sc, due, log)
	if err != nil {
		if errors.Is(err, errRunImpossible) {
			// Nothing will change by retrying (bot gone, platform
			// refusing the channel): count it and move on.
			log.Error("scheduled run impossible; skipped", "due", due, "err", err)
			c.count(sc.Key.Bot, "failed")
			return c.st.RecordScheduleSkip(ctx, sc.ID, due)
		}
		return err
	}
	if err := c.st.RecordScheduleRun(ctx, sc.ID, due, inboxID); err != nil {
		return err
	}
	outcome := "ran"
	if missed {
		outcome = "caught_up"
	}
	log.Info("scheduled run started", "due", due, "missed", missed, "ledger", inboxID)
	c.count(sc.Key.Bot, outcome)
	return nil
}

// previousRunGoing reports whether the ledger message of sc's last run is
// unfinished, with the conversation it is in.
func (c *Scheduler) previousRunGoing(ctx context.Context, sc store.Schedule) (store.Conversation, bool, error) {
	if sc.LastInboxID == "" {
		return store.Conversation{}, false, nil
	}
	m, err := c.st.InboxByID(ctx, sc.LastInboxID)
	switch {
	case errors.Is(err, store.ErrNotFound): // pruned long ago
		return store.Conversation{}, false, nil
	case err != nil:
		return store.Conversation{}, false, fmt.Errorf("previous run of schedule %d: %w", sc.ID, err)
	case m.State.Final():
		return store.Conversation{}, false, nil
	}
	conv, err := c.st.ConversationByID(ctx, m.ConversationID)
	if err != nil {
		return store.Conversation{}, false, fmt.Errorf("previous run of schedule %d: %w", sc.ID, err)
	}
	return conv, true, nil
}

// cronLoc is the time zone of sc's times.
func (c *Scheduler) cronLoc(sc store.Schedule) *time.Location {
	if cr, err := c.parse(sc.Cron, sc.TZ); err == nil {
		return cr.Loc
	}
	return time.Local
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
