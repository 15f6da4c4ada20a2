package handoff

import (
	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core/render"
)

// Event is one line of an attached terminal's stream (server-sent events,
// JSON in each data field). Type says what it is:
//   - "attached": the stream is open; Attach is the id that send and
//     decide name, Text says where the terminal is attached.
//   - "delta": a streamed piece of the agent's answer; "text": a whole
//     block of the answer (already shown when deltas came before it).
//   - "tool": a tool call's one-line summary.
//   - "result": the turn ended; Text is its footer or its error.
//   - "card": a card is open (Card, Text, Buttons) or, with no Buttons,
//     it was decided or closed (Text shows how).
//   - "message": a message someone else wrote, handed to the agent (From
//     is its author's name; "" for a schedule's run).
//   - "notice": a message of the bridge in the conversation.
//   - "private": an answer to this terminal only (a refused click).
//   - "lost": events were dropped because the terminal read too slowly.
//   - "ended": the person may no longer attach to the conversation (a
//     share ended, it was deleted, they were removed from handoff.users
//     or their token changed): the last event of the stream.
type Event struct {
	Type    string   `json:"type"`
	Text    string   `json:"text,omitempty"`
	From    string   `json:"from,omitempty"`
	Attach  string   `json:"attach,omitempty"`
	Card    string   `json:"card,omitempty"`
	Buttons []Button `json:"buttons,omitempty"`
}

// Button is one choice of a card.
type Button struct {
	ID    string `json:"id"`
	Label string `json:"label"`
}

// Event types.
const (
	EventAttached = "attached"
	EventDelta    = "delta"
	EventText     = "text"
	EventTool     = "tool"
	EventResult   = "result"
	EventCard     = "card"
	EventMessage  = "message"
	EventNotice   = "notice"
	EventPrivate  = "private"
	EventLost     = "lost"
	EventEnded    = "ended"
)

// fromAgent is what a terminal shows of an agent event; ok is false for
// events it does not show (a subagent's text, protocol details).
func fromAgent(ev streamjson.Event) (Event, bool) {
	switch e := ev.(type) {
	case streamjson.TextDelta:
		return Event{Type: EventDelta, Text: e.Text}, e.ParentToolUseID == ""
	case streamjson.AssistantText:
		return Event{Type: EventText, Text: e.Text}, e.ParentToolUseID == ""
	case streamjson.ToolUse:
		return Event{Type: EventTool, Text: render.ToolTitle(render.ToolLine(e, ""))}, e.ParentToolUseID == ""
	case streamjson.Result:
		if e.IsError {
			return Event{Type: EventResult, Text: render.ResultError(e)}, true
		}
		return Event{Type: EventResult, Text: render.Footer(e.Duration, e.CostUSD)}, true
	case streamjson.ResultsLost:
		return Event{Type: EventNotice, Text: render.ResultsLostNotice(e)}, true
	case streamjson.Exit:
		if e.Expected {
			return Event{}, false
		}
		return Event{Type: EventNotice, Text: "the agent process exited; the bridge resumes it with the next message"}, true
	}
	return Event{}, false
}

// fromShown is a notice, a card or a card's update as a terminal shows it.
func fromShown(m bridges.Message) Event {
	if m.CardID == "" {
		return Event{Type: EventNotice, Text: m.Text}
	}
	ev := Event{Type: EventCard, Card: m.CardID, Text: m.Text}
	for _, b := range m.Buttons {
		ev.Buttons = append(ev.Buttons, Button{ID: b.ID, Label: b.Label})
	}
	return ev
}
