package schedule

import (
	"context"
	"fmt"
	"strings"

	"github.com/agentbridge/agentbridge/bridges/core/render"
	"github.com/agentbridge/agentbridge/bridges/features/agenttools"
	"github.com/agentbridge/agentbridge/bridges/features/commands"
	"github.com/agentbridge/agentbridge/bridges/features/schedule/schedreq"
	"github.com/agentbridge/agentbridge/store"
)

// Feature is scheduling as the bridge registers it above the core: the
// scheduler that fires the stored schedules (core.CoreOptions.Scheduler),
// the !schedule command (CoreOptions.Commands) and the agent's schedule
// tools with their approval card (agenttools.New). Every part adds and
// removes schedules through the same scheduler, which wakes itself.
type Feature struct{ s *Scheduler }

// NewFeature makes the feature over a scheduler made of o (New).
func NewFeature(o Options) *Feature { return &Feature{s: New(o)} }

// Scheduler is the feature's scheduler (core.Scheduler).
func (f *Feature) Scheduler() *Scheduler { return f.s }

// Commands are the feature's chat commands: !schedule.
func (f *Feature) Commands() []commands.Command { return []commands.Command{f.s.command()} }

// Tools are the feature's agent tools: schedule, list_schedules and
// cancel_schedule, in that order.
func (f *Feature) Tools() []agenttools.Tool { return f.s.tools() }

// add checks r (schedreq.Check), stores it and wakes the scheduler.
// Refusals wrap schedreq.ErrRefused.
func (s *Scheduler) add(ctx context.Context, r schedreq.Request) (store.Schedule, error) {
	now := s.clock.Now()
	cr, err := schedreq.Check(ctx, s.st, now, r)
	if err != nil {
		return store.Schedule{}, err
	}
	sc, err := s.st.AddSchedule(ctx, schedreq.Row(r, cr, now))
	if err != nil {
		return store.Schedule{}, fmt.Errorf("add schedule: %w", err)
	}
	s.log.Info("schedule added", "schedule", sc.ID, "source", sc.Source, "key", r.Key, "cron", cr.String(), "user", r.CreatedBy)
	s.Wake()
	return sc, nil
}

// remove removes schedule sc as user by and wakes the scheduler.
func (s *Scheduler) remove(ctx context.Context, sc store.Schedule, by string) error {
	if err := s.st.RemoveSchedule(ctx, sc.ID, by); err != nil {
		return fmt.Errorf("remove schedule %d: %w", sc.ID, err)
	}
	s.log.Info("schedule removed", "schedule", sc.ID, "source", sc.Source, "user", by)
	s.Wake()
	return nil
}

// RunLabel names the firing of schedule id whose ledger message's author
// name is from (the run's header, schedreq.Header and the schedule's
// name), for the cards asked during it (core.Scheduler).
func (s *Scheduler) RunLabel(from string, id int64) string {
	name := strings.TrimPrefix(from, schedreq.Header)
	if id > 0 {
		return fmt.Sprintf("#%d %s", id, render.CodeSpan(schedreq.Name(name)))
	}
	return render.CodeSpan(schedreq.Name(name))
}
