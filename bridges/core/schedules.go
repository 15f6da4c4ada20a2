package core

import (
	"github.com/agentbridge/agentbridge/bridges"
)

// This file holds the core's seams to the scheduler (Scheduler,
// ScheduleRuns). Everything else about schedules — the !schedule command,
// the agent's schedule tools and their approval card, the requests and
// their texts — is the feature's, bridges/features/schedule, registered from above
// (CoreOptions.Commands, CoreOptions.Tools).

var _ ScheduleRuns = (*Core)(nil)

// Platform implements ScheduleRuns.
func (c *Core) Platform(bot string) bridges.Platform { return c.platform(bot) }

// CountScheduledRun implements ScheduleRuns.
func (c *Core) CountScheduledRun(bot string) { c.opts.Metrics.Message(bot, "scheduled") }
