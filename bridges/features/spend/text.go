package spend

import (
	"fmt"
	"strings"
	"time"

	"github.com/agentbridge/agentbridge/bridges/core/render"
	"github.com/agentbridge/agentbridge/config"
)

// The words of the spend limits: refusals, warnings and !cost lines.

// refusalText tells who that a message was not sent because of over (one
// or more used-up budgets), and when they can write again: when the last
// of them resets.
func refusalText(who author, over []budgetCheck, lim *config.Limit, now time.Time) string {
	var b strings.Builder
	fmt.Fprintf(&b, "⛔ %s, your message was not sent to the agent: ", render.Mention(who.name, who.id))
	var until time.Time
	for i, bc := range over {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(budgetPhrase(bc) + " is used up (" + usedOf(bc) + ")")
		if bc.resets.After(until) {
			until = bc.resets
		}
	}
	fmt.Fprintf(&b, ". You can send messages again %s.", resetPhrase(until, lim, now))
	return b.String()
}

// warningText warns who that bc is at 80 % or more.
func warningText(who author, bc budgetCheck, lim *config.Limit, now time.Time) string {
	return fmt.Sprintf("⚠️ %s, %d%% of %s is used (%s); it resets %s.", render.Mention(who.name, who.id), bc.percent(),
		budgetPhrase(bc), usedOf(bc), resetPhrase(bc.resets, lim, now))
}

// budgetPhrase names a budget: "your daily budget", "this bot's hourly turn limit".
func budgetPhrase(bc budgetCheck) string {
	owner := "your"
	if bc.scope == scopeTotal {
		owner = "this bot's"
	}
	switch bc.kind {
	case kindDay:
		return owner + " daily budget"
	case kindMonth:
		return owner + " monthly budget"
	default:
		return owner + " limit of turns per hour"
	}
}

// usedOf shows use against limit: "$20.41 of $20.00 today", "60 of 60 turns in the last hour".
func usedOf(bc budgetCheck) string {
	switch bc.kind {
	case kindDay:
		return render.USD(bc.used) + " of " + render.USD(bc.limit) + " today"
	case kindMonth:
		return render.USD(bc.used) + " of " + render.USD(bc.limit) + " this month"
	default:
		return fmt.Sprintf("%d of %d turns in the last hour", int(bc.used), int(bc.limit))
	}
}

// resetPhrase says when t is, in the limit's time zone and from now:
// "at 00:00 UTC (in 8h59m)", "on Apr 1 at 00:00 CEST (in 20d3h)".
func resetPhrase(t time.Time, lim *config.Limit, now time.Time) string {
	loc := lim.Location
	if loc == nil {
		loc = time.UTC
	}
	lt, ln := t.In(loc), now.In(loc)
	when := "at " + lt.Format("15:04 MST")
	if y, m, d := lt.Date(); y != ln.Year() || m != ln.Month() || d != ln.Day() {
		if lt.Sub(ln) >= 24*time.Hour || lt.Hour() != 0 || lt.Minute() != 0 {
			when = "on " + lt.Format("Jan 2") + " " + when
		}
	}
	return when + " (in " + formatIn(t.Sub(now)) + ")"
}

// formatIn renders a wait compactly at minute precision: "8h59m", "20d3h", "1m".
func formatIn(d time.Duration) string {
	if d < time.Minute {
		return "less than a minute"
	}
	d = d.Truncate(time.Minute)
	days, h, m := int(d/(24*time.Hour)), int(d.Hours())%24, int(d.Minutes())%60
	switch {
	case days > 0 && h > 0:
		return fmt.Sprintf("%dd%dh", days, h)
	case days > 0:
		return fmt.Sprintf("%dd", days)
	case h > 0:
		return fmt.Sprintf("%dh%02dm", h, m)
	default:
		return fmt.Sprintf("%dm", m)
	}
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// author is who wrote a message: a person's id and display name.
type author struct{ id, name string }
