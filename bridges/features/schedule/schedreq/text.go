package schedreq

import (
	"cmp"
	"fmt"
	"strings"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core/render"
	"github.com/agentbridge/agentbridge/config/schedules"
	"github.com/agentbridge/agentbridge/internal/textcut"
	"github.com/agentbridge/agentbridge/store"
)

// Line describes a schedule in one line for lists: id, name, cron and
// zone, the next run after now, where it runs (relative to here) and who
// made it.
func Line(sc store.Schedule, now time.Time, here bridges.ConversationKey) string {
	var b strings.Builder
	fmt.Fprintf(&b, "#%d %s %s", sc.ID, render.CodeSpan(sc.Cron), cmp.Or(sc.TZ, "local time"))
	fmt.Fprintf(&b, " — %s", textcut.OneLine(sc.Name, MaxNameRunes))
	if cr, err := schedules.ParseCron(sc.Cron, sc.TZ); err == nil {
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
			b.WriteString(" · by @" + sc.CreatedBy)
		}
	}
	return b.String()
}

// GapText formats an interval between runs: "90s", "5 min", "2 h", "1 h 30 min".
func GapText(d time.Duration) string {
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

// Name is a schedule's name as messages show it: on one line, at most
// MaxNameRunes runes.
func Name(name string) string { return textcut.OneLine(name, MaxNameRunes) }
