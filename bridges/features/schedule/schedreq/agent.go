package schedreq

import (
	"cmp"
	"fmt"
	"strings"
	"time"

	"github.com/agentbridge/agentbridge/bridges/core/render"
	"github.com/agentbridge/agentbridge/config/profile"
	"github.com/agentbridge/agentbridge/config/schedules"
	"github.com/agentbridge/agentbridge/internal/textcut"
)

// An agent's schedule request is a lasting capability (a prompt that comes
// back on its own), so under agents.*.agent_schedules:
//   - ask (the default): the schedule exists only once a person who may
//     decide its approval card (bridges/features/schedule) approves it, and that person
//     becomes its creator.
//   - allow: the schedule is created at once and announced.
//   - off: the tool refuses.

// MaxCards bounds the agent's schedule requests waiting for a decision in
// one conversation: a prompt-injected agent must not be able to bury a
// thread in cards.
const MaxCards = 3

// AskAnswer is the tool's answer when an approval card was posted.
const AskAnswer = "Asked the people in this conversation to approve the schedule: a card shows it to them. " +
	"It does not exist until a person approves it, and nothing runs if nobody does. " +
	"Do not ask again; list_schedules shows it once it is approved."

// Policy is the profile's agent_schedules; empty (a config built without
// validation) is ask.
func Policy(p *profile.Agent) string {
	switch p.AgentSchedules {
	case profile.AgentSchedulesAllow, profile.AgentSchedulesOff:
		return p.AgentSchedules
	}
	return profile.AgentSchedulesAsk
}

// ToolNote tells the agent, in the schedule tool's description, the limits
// of schedules and what agent_schedules (policy) does with its requests.
func ToolNote(policy string) string {
	note := " A person must approve each schedule first: the call shows them a card and returns; the schedule exists only once approved."
	switch policy {
	case profile.AgentSchedulesOff:
		note = " Turned off for you: every call is refused."
	case profile.AgentSchedulesAllow:
		note = ""
	}
	return fmt.Sprintf("Each run is posted as \"%sNAME\". At most one run every %s and %d schedules per conversation.%s",
		Header, GapText(MinGap), MaxPerConversation, note)
}

// CardBody is the body of the approval card of the agent's request r: when
// (the next run after now), where and what it runs. prompt is r's prompt
// as the card shows it (the core's clipped code block).
func CardBody(r Request, now time.Time, prompt string) string {
	var b strings.Builder
	b.WriteString("🗓 **The agent asks for a schedule.** It does not exist unless you create it.\n")
	when := render.CodeSpan(r.Cron) + " " + cmp.Or(r.TZ, "local time")
	if cr, err := schedules.ParseCron(r.Cron, r.TZ); err == nil {
		if next := cr.Next(now); !next.IsZero() {
			when += " · next " + next.Format("Mon 2 Jan 15:04 MST")
		}
	}
	b.WriteString("• when: " + when + "\n")
	where := "this conversation (channel " + render.CodeSpan(r.Key.Channel)
	if r.Key.Thread != "" {
		where += ", thread " + render.CodeSpan(r.Key.Thread)
	}
	b.WriteString("• where: " + where + ")\n")
	if n := strings.TrimSpace(r.Name); n != "" {
		b.WriteString("• name: " + textcut.OneLine(n, MaxNameRunes) + "\n")
	}
	b.WriteString("• prompt, sent to the agent at every run:\n")
	b.WriteString(prompt + "\n")
	b.WriteString("_Each run is a prompt for the agent, never a command, and carries nobody's rights. Whoever creates it becomes its creator._")
	return b.String()
}
