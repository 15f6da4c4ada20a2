package core

import (
	"context"
	"log/slog"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/store"
)

// Scheduler fires the stored schedules (bridges/schedule implements it).
// Core.Run calls Sync once before the platforms start and Run in a
// goroutine it waits for; the core calls Wake after a schedule was added
// or removed.
type Scheduler interface {
	// Sync stores the config file's schedules; an error stops Core.Run.
	Sync(ctx context.Context) error
	// Run fires the due schedules through runs until ctx ends.
	Run(ctx context.Context, runs ScheduleRuns)
	// Wake makes Run look at the schedules again. It never blocks.
	Wake()
}

// ScheduleRuns is what the core offers the scheduler (*Core implements
// it): a firing enters a conversation through the core's one entry point
// for work, with OriginSchedule.
type ScheduleRuns interface {
	// StartScheduledRun starts the run of sc due at due and returns its
	// ledger message's id (see startRun). An error wrapping
	// ErrRunImpossible means retrying cannot help.
	StartScheduledRun(ctx context.Context, sc store.Schedule, due time.Time, log *slog.Logger) (string, error)
	// PostSchedule posts a scheduler notice into key, logging a failure.
	PostSchedule(ctx context.Context, key bridges.ConversationKey, text string, log *slog.Logger)
}

var _ ScheduleRuns = (*Core)(nil)

// StartScheduledRun implements ScheduleRuns.
func (c *Core) StartScheduledRun(ctx context.Context, sc store.Schedule, due time.Time, log *slog.Logger) (string, error) {
	return c.startRun(ctx, sc, due, log)
}

// PostSchedule implements ScheduleRuns.
func (c *Core) PostSchedule(ctx context.Context, key bridges.ConversationKey, text string, log *slog.Logger) {
	c.postSchedule(ctx, key, text, log)
}

// wakeScheduler makes the scheduler look at the schedules again (one was
// added or removed). It never blocks.
func (c *Core) wakeScheduler() {
	if c.opts.Scheduler != nil {
		c.opts.Scheduler.Wake()
	}
}

// RealClock is the real time, the default Clock.
func RealClock() Clock { return realClock{} }
