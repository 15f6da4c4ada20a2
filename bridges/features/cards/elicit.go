package cards

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/bridges/core/render"
	"github.com/agentbridge/agentbridge/bridges/core/worker"
	"github.com/agentbridge/agentbridge/internal/textcut"
	"github.com/agentbridge/agentbridge/store"
)

// OnElicitation shows an MCP server's elicitation request (a form the
// server wants filled in) as a question card, with the authority of a
// permission card: the turn's requesters, approvers and admins decide.
// Each field becomes a question: an enum field offers its values, a
// boolean Yes and No (as buttons; several such fields are toggled and
// submitted), a single text or number field is answered by reply. The
// card has a Decline button; approval_timeout declines it. A form the
// card cannot show (URL mode, several fields of which one wants text,
// nested or unknown types) is cancelled — MCP's "dismissed without a
// choice" — and the conversation is told what was asked. The server's
// texts are untrusted: shown on one line, clipped.
func (s *Set) OnElicitation(ctx context.Context, e streamjson.Elicitation) {
	if !s.h.CanElicit() {
		return
	}
	server := render.CodeSpan(textcut.OneLine(textcut.OrBlank(e.Server, "unknown"), 60))
	asked := "“" + textcut.OneLine(textcut.OrBlank(e.Message, "no message"), 300) + "”"
	form, qs, err := render.ParseElicitation(e)
	if err != nil {
		s.h.Log().Info("agent elicitation cancelled: form not shown", "request", e.RequestID, "mcp_server", e.Server, "mode", e.Mode, "err", err)
		s.answerElicitation(ctx, e.RequestID, streamjson.ElicitCancel, nil)
		s.h.Notice(ctx, fmt.Sprintf("🔌 The MCP server %s asked for input (%s) that this bridge cannot show (%v), so the request was cancelled.", server, asked, err))
		return
	}
	cd := &card{id: e.RequestID, kind: cardQuestion, questions: qs, elicit: form,
		req: streamjson.PermissionRequest{RequestID: e.RequestID, ToolName: "MCP elicitation: " + e.Server, Input: e.Schema}}
	cd.picked = make([][]bool, len(qs))
	for i, q := range qs {
		cd.picked[i] = make([]bool, len(q.Options))
	}
	cd.intro = "🔌 **The MCP server " + server + " asks:** " + asked + "\n\n"
	cd.body = cd.intro + render.QuestionBody(qs, nil)
	s.openCard(ctx, cd)
	if s.open[cd.id] == nil { // the card could not be posted
		s.answerElicitation(ctx, e.RequestID, streamjson.ElicitCancel, nil)
	}
}

// answerElicitation answers the CLI, logging a failure.
func (s *Set) answerElicitation(ctx context.Context, id, action string, content map[string]any) {
	if err := s.h.RespondElicitation(ctx, id, action, content); err != nil {
		s.h.Log().Warn("answer elicitation", "request", id, "action", action, "err", err)
	}
}

// respondElicitation turns the decision the question card machinery
// reached (respond's choke point) into the elicitation's answer: an allow
// carries the answers (question → label or typed text) and is sent as
// accept with the form's values; anything else (Decline, the approval
// timeout, a card that could not be shown) declines. Answers that do not
// fit their fields (a text that is no enum value, a number that does not
// parse) decline too, and the conversation is told.
func (s *Set) respondElicitation(ctx context.Context, cd *card, d streamjson.Decision) {
	if !d.Allow {
		s.answerElicitation(ctx, cd.id, streamjson.ElicitDecline, nil)
		return
	}
	var in struct {
		Answers map[string]string `json:"answers"`
	}
	_ = json.Unmarshal(d.UpdatedInput, &in)
	content, err := cd.elicit.Content(in.Answers)
	if err != nil {
		s.h.Log().Info("elicitation answer does not fit the form; declined", "request", cd.id, "err", err)
		s.h.Notice(ctx, "🔌 That answer does not fit the form ("+textcut.OneLine(err.Error(), 200)+"), so the request was declined.")
		s.answerElicitation(ctx, cd.id, streamjson.ElicitDecline, nil)
		return
	}
	s.answerElicitation(ctx, cd.id, streamjson.ElicitAccept, content)
}

// declineElicitation closes an elicitation card as declined by who.
func (s *Set) declineElicitation(ctx context.Context, cd *card, who worker.Person) {
	msg := "Declined by " + mention(who)
	s.resolve(ctx, cd, streamjson.Decision{Message: msg}, store.DecisionDeny, who, msg, "❌ "+msg)
}
