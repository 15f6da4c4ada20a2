package core

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/store"
)

// Limits on the schedules people make in chat and agents make with their
// tool (config schedules are the admins' and are not limited): a prompt
// injected into an agent must not be able to fill a channel or a bill.
const (
	maxSchedulesPerConversation = 10
	minScheduleGap              = 5 * time.Minute
	maxScheduleNameRunes        = 60
)

// scheduleHeader starts the message that announces a scheduled run.
const scheduleHeader = "⏰ scheduled: "

// errScheduleRefused wraps the reasons a schedule is not accepted; its
// message is meant for the person or agent who asked.
var errScheduleRefused = errors.New("schedule refused")

// scheduleRequest is a chat or agent schedule to add.
type scheduleRequest struct {
	source    store.ScheduleSource
	name      string // "" = from the prompt
	cron, tz  string
	prompt    string
	key       bridges.ConversationKey // where the runs go: the conversation it was made in
	convID    string
	createdBy string
	agent     string // the conversation's agent profile
}

// addSchedule checks r (checkSchedule), stores it and wakes the
// scheduler. Refusals wrap errScheduleRefused.
func (c *Core) addSchedule(ctx context.Context, r scheduleRequest) (store.Schedule, error) {
	cr, err := c.checkSchedule(ctx, r)
	if err != nil {
		return store.Schedule{}, err
	}
	prompt := strings.TrimSpace(r.prompt)
	name := oneLine(r.name, maxScheduleNameRunes)
	if name == "" {
		name = oneLine(prompt, 40)
	}
	sc, err := c.st.AddSchedule(ctx, store.Schedule{
		Source: r.source, Name: name, Key: storeKey(r.key), Cron: cr.Expr, TZ: cr.Zone, Prompt: prompt,
		Agent: r.agent, CatchUp: true, CreatedBy: r.createdBy, ConversationID: r.convID,
		LastFireAt: c.clock.Now(), // runs start after now
	})
	if err != nil {
		return store.Schedule{}, fmt.Errorf("add schedule: %w", err)
	}
	c.log.Info("schedule added", "schedule", sc.ID, "source", sc.Source, "key", r.key, "cron", cr.String(), "user", r.createdBy)
	c.wakeScheduler()
	return sc, nil
}

// checkSchedule reports why r cannot be added (wrapping
// errScheduleRefused), or returns its parsed cron: a valid cron and zone,
// at most one run per minScheduleGap, a prompt, at most
// maxSchedulesPerConversation active in the conversation.
func (c *Core) checkSchedule(ctx context.Context, r scheduleRequest) (config.Cron, error) {
	cr, err := config.ParseCron(r.cron, r.tz)
	if err != nil {
		return cr, fmt.Errorf("%w: %w", errScheduleRefused, err)
	}
	if gap := cr.MinGap(c.clock.Now(), 50); gap == 0 {
		return cr, fmt.Errorf("%w: %s never fires", errScheduleRefused, cr.Expr)
	} else if gap < minScheduleGap {
		return cr, fmt.Errorf("%w: %s fires every %s; schedules made in chat or by the agent may run at most every %s",
			errScheduleRefused, cr.Expr, gapText(gap), gapText(minScheduleGap))
	}
	if strings.TrimSpace(r.prompt) == "" {
		return cr, fmt.Errorf("%w: the prompt is empty", errScheduleRefused)
	}
	existing, err := c.st.SchedulesOfConversation(ctx, r.convID)
	if err != nil {
		return cr, fmt.Errorf("check schedule: %w", err)
	}
	if len(existing) >= maxSchedulesPerConversation {
		return cr, fmt.Errorf("%w: this conversation already has %d schedules (the most allowed); remove one first",
			errScheduleRefused, len(existing))
	}
	return cr, nil
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

// scheduleLine describes a schedule in one line for lists: id, name,
// cron and zone, the next run, where it runs (relative to here) and who
// made it.
func scheduleLine(sc store.Schedule, now time.Time, here bridges.ConversationKey) string {
	var b strings.Builder
	fmt.Fprintf(&b, "#%d %s %s", sc.ID, codeSpan(sc.Cron), orDefault(sc.TZ, "local time"))
	fmt.Fprintf(&b, " — %s", oneLine(sc.Name, maxScheduleNameRunes))
	if cr, err := config.ParseCron(sc.Cron, sc.TZ); err == nil {
		if next := cr.Next(now); !next.IsZero() {
			b.WriteString(" · next " + next.Format("Mon 2 Jan 15:04 MST"))
		}
	}
	switch {
	case sc.NewThread:
		b.WriteString(" · a new thread each run")
	case bridges.ConversationKey(sc.Key) == here:
		b.WriteString(" · here")
	case sc.Key.Thread == "":
		b.WriteString(" · in the channel")
	default:
		b.WriteString(" · in another thread")
	}
	switch sc.Source {
	case store.ScheduleFromConfig:
		b.WriteString(" · config file")
	case store.ScheduleFromAgent:
		b.WriteString(" · made by the agent")
	default:
		if sc.CreatedBy != "" {
			b.WriteString(" · by " + mention(author{id: sc.CreatedBy}))
		}
	}
	return b.String()
}

// gapText formats an interval between runs: "90s", "5 min", "2 h", "1 h 30 min".
func gapText(d time.Duration) string {
	switch {
	case d < time.Minute || d%time.Minute != 0:
		return d.Round(time.Second).String()
	case d < time.Hour:
		return fmt.Sprintf("%d min", d/time.Minute)
	case d%time.Hour == 0:
		return fmt.Sprintf("%d h", d/time.Hour)
	default:
		return fmt.Sprintf("%d h %d min", d/time.Hour, (d%time.Hour)/time.Minute)
	}
}
