package render

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/internal/textcut"
	"github.com/agentbridge/agentbridge/store"
)

// FormatOutage formats an outage's length for people: "45 s", "12 min",
// "3 h 5 min".
func FormatOutage(d time.Duration) string {
	switch {
	case d < 90*time.Second:
		return fmt.Sprintf("%d s", int(d.Round(time.Second)/time.Second))
	case d < 90*time.Minute:
		return fmt.Sprintf("%d min", int(d.Round(time.Minute)/time.Minute))
	}
	d = d.Round(time.Minute)
	h, m := int(d/time.Hour), int(d%time.Hour/time.Minute)
	if m == 0 {
		return fmt.Sprintf("%d h", h)
	}
	return fmt.Sprintf("%d h %d min", h, m)
}

// TaskNotice describes a finished background task.
func TaskNotice(e streamjson.TaskNotification) string {
	summary := e.Summary
	if strings.TrimSpace(summary) == "" {
		summary = e.TaskID
	}
	summary = textcut.OneLine(summary, 300)
	switch e.Status {
	case "completed":
		return "✅ Background task finished: " + summary
	case "failed":
		return "❌ Background task failed: " + summary
	case "stopped", "killed":
		return "⏹ Background task stopped: " + summary
	default:
		return "ℹ️ Background task " + e.Status + ": " + summary
	}
}

// maxQuotedRunes bounds the quoted text given to the agent.
const maxQuotedRunes = 2000

// QuotedPrefix marks the text a message quotes for the agent, as a
// Markdown quote after a header line ("" for none), so that the agent
// tells it from the author's own words.
func QuotedPrefix(quoted string) string {
	quoted = strings.TrimSpace(quoted)
	if quoted == "" {
		return ""
	}
	var b strings.Builder
	b.WriteString("[Replying to this message]\n")
	for line := range strings.Lines(textcut.Truncate(quoted, maxQuotedRunes)) {
		b.WriteString("> " + strings.TrimRight(line, "\n") + "\n")
	}
	return b.String() + "\n"
}

// StaleCardBody re-renders a card from its audit record (for a card left
// open by a restart).
func StaleCardBody(a store.Approval, workdir string) string {
	switch a.ToolName {
	case "ExitPlanMode":
		return PlanBody(Str(InputMap(a.Input), "plan"), DefaultMaxRunes)
	case "AskUserQuestion":
		var in struct {
			Questions []Question `json:"questions"`
		}
		if err := json.Unmarshal(a.Input, &in); err == nil && len(in.Questions) > 0 {
			return QuestionBody(in.Questions, nil)
		}
	}
	return PermissionBody(a.ToolName, a.Input, "", "", workdir)
}

// StateSummary is a bot's state in one line for chat (!status) at now.
// A reconnecting bot says since when (the start of the outage, and how
// long ago), how many attempts failed and the last error.
func StateSummary(s bridges.BotStatus, now time.Time) string {
	line := string(s.State)
	if s.State == bridges.ConnReconnecting && !s.Since.IsZero() {
		line += " since " + s.Since.UTC().Format("2006-01-02 15:04:05 UTC") + " (" + RoundAgo(now.Sub(s.Since)) + " ago"
		if s.Attempt > 0 {
			line += fmt.Sprintf(", %d failed attempts", s.Attempt)
		}
		line += ")"
	}
	if s.State == bridges.ConnStandby && s.Reason != "" {
		line += ": " + textcut.OneLine(s.Reason, 200)
	}
	if s.State == bridges.ConnFailed || s.State == bridges.ConnReconnecting {
		if s.Reason != "" {
			sep := ": "
			if s.State == bridges.ConnReconnecting && s.Attempt > 0 {
				sep = "; last error: "
			}
			line += sep + textcut.OneLine(s.Reason, 200)
		}
		if s.Hint != "" {
			line += " — " + textcut.OneLine(s.Hint, 200)
		}
		if !s.Until.IsZero() {
			line += " (until " + s.Until.UTC().Format(time.RFC3339) + ")"
		}
	}
	return line
}

// RoundAgo is d for people: whole seconds under a minute, else whole
// minutes (never negative).
func RoundAgo(d time.Duration) string {
	d = max(d, 0)
	if d < time.Minute {
		return d.Round(time.Second).String()
	}
	return strings.TrimSuffix(d.Truncate(time.Minute).String(), "0s")
}

// ResultsLostNotice tells a conversation that the agent finished turns
// whose results never reached the bridge (a gap in result_index): their
// replies are missing, so the user knows to ask again.
func ResultsLostNotice(e streamjson.ResultsLost) string {
	if e.Count == 1 {
		return "⚠️ The agent finished a reply that never reached the bridge, so it is missing here. Ask again if you are waiting for an answer."
	}
	return fmt.Sprintf("⚠️ The agent finished %d replies that never reached the bridge, so they are missing here. Ask again if you are waiting for an answer.", e.Count)
}

// ConnectionLines are !status's lines about connections: bot's state and,
// for an admin, every other bot of states that is not connected or
// running (others do not learn the names of the bridge's other bots).
func ConnectionLines(states []bridges.BotStatus, bot string, admin bool, now time.Time) string {
	var b strings.Builder
	for _, s := range states {
		switch {
		case s.Bot == bot:
			b.WriteString("\n• connection: " + StateSummary(s, now))
		case admin && s.State != bridges.ConnConnected && s.State != bridges.ConnRunning:
			b.WriteString("\n• bot " + CodeSpan(s.Bot) + ": " + StateSummary(s, now))
		}
	}
	return b.String()
}
