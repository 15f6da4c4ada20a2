package core

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/schedule/schedreq"
	"github.com/agentbridge/agentbridge/store"
)

// scheduleCommand is "!schedule": add, list and remove scheduled prompts.
// Anyone allowed to talk may add and list; a schedule is removed by its
// creator or an admin (checked in cmdSchedule: it depends on the schedule).
func scheduleCommand() command {
	return command{name: "schedule", usage: `add "CRON" [tz=ZONE] PROMPT | list | rm ID`,
		help: "run a prompt in this conversation on a cron schedule (`0 9 * * 1-5` = weekdays at 9), list this channel's schedules, remove one (its creator or an admin)"}
}

// scheduleUsage explains !schedule.
const scheduleUsage = "Usage: `" + bridges.CommandPrefix + `schedule add "0 9 * * 1-5" summarise yesterday's failed CI runs` + "` (minute hour day-of-month month day-of-week; " +
	"add `tz=Europe/Berlin` before the prompt for a time zone), `" + bridges.CommandPrefix + "schedule list`, `" + bridges.CommandPrefix + "schedule rm ID`."

// cmdSchedule runs "!schedule …" for the author of m.
func (cv *conversation) cmdSchedule(ctx context.Context, m store.InboxMessage, l cmdLine) {
	who := author{m.UserID, m.UserName}
	switch strings.ToLower(l.arg(0)) {
	case "add":
		cv.scheduleAdd(ctx, who, l.after(1))
	case "list", "ls", "":
		cv.scheduleList(ctx)
	case "rm", "remove", "cancel":
		if len(l.args) != 2 {
			cv.notice(ctx, "Usage: `"+bridges.CommandPrefix+"schedule rm ID` (the number `"+bridges.CommandPrefix+"schedule list` shows).")
			return
		}
		cv.scheduleRemove(ctx, who, l.arg(1))
	default:
		cv.notice(ctx, scheduleUsage)
	}
}

func (cv *conversation) scheduleAdd(ctx context.Context, who author, rest string) {
	cron, tz, prompt, ok := schedreq.ParseAdd(rest)
	if !ok {
		cv.notice(ctx, scheduleUsage)
		return
	}
	sc, err := cv.core.addSchedule(ctx, schedreq.Request{
		Source: store.ScheduleFromChat, Cron: cron, TZ: tz, Prompt: prompt,
		Key: cv.key, ConvID: cv.id, CreatedBy: who.id, Agent: cv.profile.Name,
	})
	switch {
	case errors.Is(err, schedreq.ErrRefused):
		cv.notice(ctx, "⚠️ "+strings.TrimPrefix(err.Error(), schedreq.ErrRefused.Error()+": "))
		return
	case err != nil:
		cv.log.Error("add schedule", "err", err)
		cv.notice(ctx, "⚠️ Could not add the schedule (database error).")
		return
	}
	cv.notice(ctx, "🗓 Scheduled "+schedreq.Line(sc, cv.core.clock.Now(), cv.key)+
		". Each run is posted here as \""+schedreq.Header+sc.Name+"\"; remove it with `"+bridges.CommandPrefix+"schedule rm "+strconv.FormatInt(sc.ID, 10)+"`.")
}

func (cv *conversation) scheduleList(ctx context.Context) {
	all, err := cv.core.st.SchedulesInChannel(ctx, cv.key.Bot, cv.key.Channel)
	if err != nil {
		cv.log.Error("list schedules", "err", err)
		cv.notice(ctx, "⚠️ Could not read the schedules (database error).")
		return
	}
	if len(all) == 0 {
		cv.notice(ctx, "🗓 No schedules in this channel. "+scheduleUsage)
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, "🗓 **Schedules in this channel** (%d)\n", len(all))
	now := cv.core.clock.Now()
	for _, sc := range all {
		b.WriteString("• " + schedreq.Line(sc, now, cv.key) + "\n")
	}
	cv.notice(ctx, strings.TrimSpace(b.String()))
}

func (cv *conversation) scheduleRemove(ctx context.Context, who author, arg string) {
	id, err := strconv.ParseInt(strings.TrimPrefix(arg, "#"), 10, 64)
	if err != nil || id <= 0 {
		cv.notice(ctx, "Usage: `"+bridges.CommandPrefix+"schedule rm ID` (the number `"+bridges.CommandPrefix+"schedule list` shows).")
		return
	}
	sc, err := cv.core.st.ScheduleByID(ctx, id)
	switch {
	case errors.Is(err, store.ErrNotFound) || err == nil && (!sc.Active() || sc.Key.Bot != cv.key.Bot):
		cv.notice(ctx, fmt.Sprintf("There is no schedule #%d.", id))
		return
	case err != nil:
		cv.log.Error("read schedule", "schedule", id, "err", err)
		cv.notice(ctx, "⚠️ Could not read the schedule (database error).")
		return
	case sc.Source == store.ScheduleFromConfig:
		cv.notice(ctx, fmt.Sprintf("⛔ Schedule #%d (%s) comes from the config file: an admin removes it there.", id, schedreq.Name(sc.Name)))
		return
	case sc.CreatedBy != who.id && !isAdmin(cv.bot, who.id):
		cv.log.Info("schedule removal refused", "schedule", id, "user", who.id)
		cv.notice(ctx, fmt.Sprintf("⛔ Only whoever made schedule #%d (%s) or an admin may remove it.", id, mention(author{id: sc.CreatedBy})))
		return
	}
	if err := cv.core.removeSchedule(ctx, sc, who.id); err != nil {
		cv.log.Error("remove schedule", "schedule", id, "err", err)
		cv.notice(ctx, "⚠️ Could not remove the schedule (database error).")
		return
	}
	cv.notice(ctx, fmt.Sprintf("🗑 Removed schedule #%d (%s).", id, schedreq.Name(sc.Name)))
}
