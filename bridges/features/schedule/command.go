package schedule

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core/render"
	"github.com/agentbridge/agentbridge/bridges/core/worker"
	"github.com/agentbridge/agentbridge/bridges/features/commands"
	"github.com/agentbridge/agentbridge/bridges/features/schedule/schedreq"
	"github.com/agentbridge/agentbridge/store"
)

// command is "!schedule": add, list and remove scheduled prompts.
// Anyone allowed to talk may add and list; a schedule is removed by its
// creator or an admin (checked in scheduleRemove: it depends on the
// schedule).
func (s *Scheduler) command() commands.Command {
	return commands.Command{Name: "schedule", Usage: `add "CRON" [tz=ZONE] PROMPT | list | rm ID`,
		Help: "run a prompt in this conversation on a cron schedule (`0 9 * * 1-5` = weekdays at 9), list this channel's schedules, remove one (its creator or an admin)",
		Run:  s.runSchedule}
}

// scheduleUsage explains !schedule.
const scheduleUsage = "Usage: `" + bridges.CommandPrefix + `schedule add "0 9 * * 1-5" summarise yesterday's failed CI runs` + "` (minute hour day-of-month month day-of-week; " +
	"add `tz=Europe/Berlin` before the prompt for a time zone), `" + bridges.CommandPrefix + "schedule list`, `" + bridges.CommandPrefix + "schedule rm ID`."

// runSchedule runs "!schedule …" for who.
func (s *Scheduler) runSchedule(ctx context.Context, c commands.Conversation, who worker.Person, l commands.Line) {
	switch strings.ToLower(l.Arg(0)) {
	case "add":
		s.scheduleAdd(ctx, c, who, l.After(1))
	case "list", "ls", "":
		s.scheduleList(ctx, c)
	case "rm", "remove", "cancel":
		if len(l.Args) != 2 {
			c.Notice(ctx, "Usage: `"+bridges.CommandPrefix+"schedule rm ID` (the number `"+bridges.CommandPrefix+"schedule list` shows).")
			return
		}
		s.scheduleRemove(ctx, c, who, l.Arg(1))
	default:
		c.Notice(ctx, scheduleUsage)
	}
}

func (s *Scheduler) scheduleAdd(ctx context.Context, c commands.Conversation, who worker.Person, rest string) {
	cron, tz, prompt, ok := schedreq.ParseAdd(rest)
	if !ok {
		c.Notice(ctx, scheduleUsage)
		return
	}
	sc, err := s.add(ctx, schedreq.Request{
		Source: store.ScheduleFromChat, Cron: cron, TZ: tz, Prompt: prompt,
		Key: c.Key(), ConvID: c.ID(), CreatedBy: who.ID, Agent: c.Profile().Name,
	})
	switch {
	case errors.Is(err, schedreq.ErrRefused):
		c.Notice(ctx, "⚠️ "+strings.TrimPrefix(err.Error(), schedreq.ErrRefused.Error()+": "))
		return
	case err != nil:
		c.Log().Error("add schedule", "err", err)
		c.Notice(ctx, "⚠️ Could not add the schedule (database error).")
		return
	}
	c.Notice(ctx, "🗓 Scheduled "+schedreq.Line(sc, c.Now(), c.Key())+
		". Each run is posted here as \""+schedreq.Header+sc.Name+"\"; remove it with `"+bridges.CommandPrefix+"schedule rm "+strconv.FormatInt(sc.ID, 10)+"`.")
}

func (s *Scheduler) scheduleList(ctx context.Context, c commands.Conversation) {
	all, err := s.st.SchedulesInChannel(ctx, c.Key().Bot, c.Key().Channel)
	if err != nil {
		c.Log().Error("list schedules", "err", err)
		c.Notice(ctx, "⚠️ Could not read the schedules (database error).")
		return
	}
	if len(all) == 0 {
		c.Notice(ctx, "🗓 No schedules in this channel. "+scheduleUsage)
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, "🗓 **Schedules in this channel** (%d)\n", len(all))
	now := c.Now()
	for _, sc := range all {
		b.WriteString("• " + schedreq.Line(sc, now, c.Key()) + "\n")
	}
	c.Notice(ctx, strings.TrimSpace(b.String()))
}

// scheduleRemove removes schedule arg of this bot if who made it or is an
// admin; a config file's schedule is removed only there.
func (s *Scheduler) scheduleRemove(ctx context.Context, c commands.Conversation, who worker.Person, arg string) {
	id, err := strconv.ParseInt(strings.TrimPrefix(arg, "#"), 10, 64)
	if err != nil || id <= 0 {
		c.Notice(ctx, "Usage: `"+bridges.CommandPrefix+"schedule rm ID` (the number `"+bridges.CommandPrefix+"schedule list` shows).")
		return
	}
	sc, err := s.st.ScheduleByID(ctx, id)
	switch {
	case errors.Is(err, store.ErrNotFound) || err == nil && (!sc.Active() || sc.Key.Bot != c.Key().Bot):
		c.Notice(ctx, fmt.Sprintf("There is no schedule #%d.", id))
		return
	case err != nil:
		c.Log().Error("read schedule", "schedule", id, "err", err)
		c.Notice(ctx, "⚠️ Could not read the schedule (database error).")
		return
	case sc.Source == store.ScheduleFromConfig:
		c.Notice(ctx, fmt.Sprintf("⛔ Schedule #%d (%s) comes from the config file: an admin removes it there.", id, schedreq.Name(sc.Name)))
		return
	case sc.CreatedBy != who.ID && !c.Bot().Access.IsAdmin(who.ID):
		c.Log().Info("schedule removal refused", "schedule", id, "user", who.ID)
		c.Notice(ctx, fmt.Sprintf("⛔ Only whoever made schedule #%d (%s) or an admin may remove it.", id, render.Mention("", sc.CreatedBy)))
		return
	}
	if err := s.remove(ctx, sc, who.ID); err != nil {
		c.Log().Error("remove schedule", "schedule", id, "err", err)
		c.Notice(ctx, "⚠️ Could not remove the schedule (database error).")
		return
	}
	c.Notice(ctx, fmt.Sprintf("🗑 Removed schedule #%d (%s).", id, schedreq.Name(sc.Name)))
}
