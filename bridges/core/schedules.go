package core

import (
	"context"
	"fmt"

	"github.com/agentbridge/agentbridge/bridges/schedule/schedreq"
	"github.com/agentbridge/agentbridge/store"
)

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
