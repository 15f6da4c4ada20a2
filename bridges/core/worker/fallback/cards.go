// Package fallback holds what a worker gets for a seam its core was given
// none of: cards that fail closed (Cards), an observer that sees nothing
// (Observer).
package fallback

import (
	"context"
	"fmt"

	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core/render"
	"github.com/agentbridge/agentbridge/bridges/core/toolconv"
	"github.com/agentbridge/agentbridge/bridges/core/worker"
	"github.com/agentbridge/agentbridge/store"
)

// Cards makes the card set of each worker of a bridge without cards
// (CoreOptions.Cards nil): it fails closed, denying every permission
// request of the agent with a notice and declining its elicitations.
type Cards struct{}

var _ worker.Cards = Cards{}

// New implements worker.Cards.
func (Cards) New(c worker.Conv) worker.CardSet { return noCards{c} }

// noCardsText is what the agent and the conversation are told of a
// request nobody can decide: the core runs without cards.
const noCardsText = "This bridge runs without approval cards, so nobody can approve this request: it was denied."

// noCards is the card set of one conversation.
type noCards struct{ c worker.Conv }

func (noCards) Len() int { return 0 }

func (n noCards) OnPermission(ctx context.Context, req streamjson.PermissionRequest) {
	n.c.Log().Warn("permission request denied: no cards", "request", req.RequestID, "tool", req.ToolName)
	if err := n.c.Respond(ctx, req.RequestID, streamjson.Decision{Message: noCardsText}); err != nil {
		n.c.Log().Warn("deny permission request", "request", req.RequestID, "err", err)
	}
	n.c.Notice(ctx, "🔒 "+render.CodeSpan(req.ToolName)+": "+noCardsText)
}

func (n noCards) OnElicitation(ctx context.Context, e streamjson.Elicitation) {
	if err := n.c.RespondElicitation(ctx, e.RequestID, streamjson.ElicitDecline, nil); err != nil {
		n.c.Log().Warn("decline elicitation", "request", e.RequestID, "err", err)
	}
}

func (n noCards) OnAction(ctx context.Context, a bridges.Action) {
	n.c.ReplyPrivately(ctx, a, "This request is no longer open.")
}

func (noCards) AnswerFromText(context.Context, store.InboxMessage) bool { return false }
func (noCards) Operator(context.Context, bridges.Action) string {
	return "This request is no longer open."
}

func (noCards) OpenApproval(context.Context, toolconv.Approval) error {
	return fmt.Errorf("%w: %s", toolconv.ErrRefused, noCardsText)
}

func (noCards) Expire(context.Context, string)                                {}
func (noCards) Close(context.Context, string, store.Decision, string, string) {}
func (noCards) ExpireAll(context.Context, string)                             {}

func (n noCards) Rules(ctx context.Context, _ []string, _ worker.Person) {
	n.c.Notice(ctx, "This bridge runs without approval cards: no rules or grants apply, every request is denied.")
}
