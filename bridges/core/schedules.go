package core

import (
	"context"

	"github.com/agentbridge/agentbridge/bridges"
)

// This file holds the core's seams to the scheduler (Scheduler,
// ScheduleRuns). Everything else about schedules — the !schedule command,
// the agent's schedule tools and their approval card, the requests and
// their texts — is the feature's, bridges/features/schedule, registered from above
// (CoreOptions.Commands, CoreOptions.Tools).

// Scheduler fires the stored schedules (bridges/features/schedule implements it).
// Core.Run calls Sync once before the platforms start and Run in a
// goroutine it waits for; a config reload calls Sync and then Wake.
type Scheduler interface {
	// Sync stores the config file's schedules; an error stops Core.Run.
	Sync(ctx context.Context) error
	// Run fires the due schedules through runs until ctx ends.
	Run(ctx context.Context, runs ScheduleRuns)
	// Wake makes Run look at the schedules again. It never blocks.
	Wake()
	// RunLabel names, for the cards asked during it, the firing of
	// schedule id (Submission.ScheduleID, 0 when unknown) whose ledger
	// message's author name is from (Submission.UserName).
	RunLabel(from string, id int64) string
}

// ScheduleRuns is what the core offers the scheduler (*Core implements
// it): a firing enters a conversation through the core's one entry point
// for work (Submit) with OriginSchedule.
type ScheduleRuns interface {
	// Submit is Core.Submit.
	Submit(ctx context.Context, s Submission) (Receipt, error)
	// Platform is the running adapter of bot, nil when there is none: the
	// scheduler posts a run's header and its notices there.
	Platform(bot string) bridges.Platform
	// CountScheduledRun counts an accepted scheduled run of bot (metrics).
	CountScheduledRun(bot string)
}

var _ ScheduleRuns = (*Core)(nil)

// Platform implements ScheduleRuns.
func (c *Core) Platform(bot string) bridges.Platform { return c.platform(bot) }

// CountScheduledRun implements ScheduleRuns.
func (c *Core) CountScheduledRun(bot string) { c.opts.Metrics.Message(bot, "scheduled") }
