package core

import (
	"context"
	"errors"
	"fmt"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/schedule/schedreq"
	"github.com/agentbridge/agentbridge/store"
)

// This file holds the core's side of schedules: the seams to the scheduler
// (Scheduler, ScheduleRuns), adding and removing a schedule, and the
// approval card of a schedule the agent asks for. The requests themselves
// (parsing, checks, texts) are bridges/schedule/schedreq's.

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

// wakeScheduler makes the scheduler look at the schedules again (one was
// added or removed). It never blocks.
func (c *Core) wakeScheduler() {
	if c.opts.Scheduler != nil {
		c.opts.Scheduler.Wake()
	}
}

// addSchedule checks r (schedreq.Check), stores it and wakes the
// scheduler. Refusals wrap schedreq.ErrRefused.
func (c *Core) addSchedule(ctx context.Context, r schedreq.Request) (store.Schedule, error) {
	now := c.clock.Now()
	cr, err := schedreq.Check(ctx, c.st, now, r)
	if err != nil {
		return store.Schedule{}, err
	}
	sc, err := c.st.AddSchedule(ctx, schedreq.Row(r, cr, now))
	if err != nil {
		return store.Schedule{}, fmt.Errorf("add schedule: %w", err)
	}
	c.log.Info("schedule added", "schedule", sc.ID, "source", sc.Source, "key", r.Key, "cron", cr.String(), "user", r.CreatedBy)
	c.wakeScheduler()
	return sc, nil
}

// removeSchedule removes schedule sc as user by and wakes the scheduler.
func (c *Core) removeSchedule(ctx context.Context, sc store.Schedule, by string) error {
	if err := c.st.RemoveSchedule(ctx, sc.ID, by); err != nil {
		return fmt.Errorf("remove schedule %d: %w", sc.ID, err)
	}
	c.log.Info("schedule removed", "schedule", sc.ID, "source", sc.Source, "user", by)
	c.wakeScheduler()
	return nil
}

// The rest of this file is what happens when the agent asks for a schedule
// with its schedule tool. A schedule is a lasting capability (a prompt that
// comes back on its own), so under agents.*.agent_schedules:
//   - ask (the default): the tool checks the request, posts a card showing
//     the cron expression, the prompt and where it runs, and returns at
//     once. Nothing is stored: the schedule exists only once a person who
//     may decide the card (the current turn's requesters, approvers,
//     admins — see requesters) approves it, and that person becomes its
//     creator. The card is audited like a permission card. It outlives the
//     turn, but not approval_timeout, the agent process (its exit, !new,
//     eviction close it) or the bridge (a restart closes it as expired):
//     a closed card can never be approved into existence.
//   - allow: the schedule is created at once and announced.
//   - off: the tool refuses.

// errNoWorker: the conversation has no running worker to ask.
var errNoWorker = errors.New("the conversation is not running")

// askSchedule checks r and, if it could be added, has the conversation's
// worker post an approval card for it. It returns when the card is posted
// (or could not be); it does not wait for the decision.
func (t *toolConv) askSchedule(ctx context.Context, r schedreq.Request) error {
	if _, err := schedreq.Check(ctx, t.core.st, t.core.clock.Now(), r); err != nil {
		return err
	}
	done := make(chan error, 1)
	err := t.core.onLiveWorker(ctx, t.key, func(ctx context.Context, cv *conversation) {
		done <- cv.cards.OpenSchedule(ctx, r)
	})
	if err != nil {
		return fmt.Errorf("ask for approval of a schedule: %w", err)
	}
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return fmt.Errorf("ask for approval of a schedule: %w", ctx.Err())
	}
}

// onLiveWorker runs f on the running worker of key (the agent's tools run
// only while their conversation's worker does), waiting for room in its
// queue until ctx ends.
func (c *Core) onLiveWorker(ctx context.Context, key bridges.ConversationKey, f func(context.Context, *conversation)) error {
	c.mu.Lock()
	cv := c.convs[key]
	c.mu.Unlock()
	if cv == nil {
		return errNoWorker
	}
	return cv.q.PushWait(ctx, inCall{f})
}
