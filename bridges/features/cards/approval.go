package cards

import (
	"context"
	"fmt"

	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core/toolconv"
	"github.com/agentbridge/agentbridge/bridges/core/worker"
	"github.com/agentbridge/agentbridge/store"
)

// OpenApproval posts the approval card a feature asks for on the agent's
// behalf (toolconv.Approval): refused (a.Full) when a.Max cards of its
// tool wait already, or when the card could not be shown.
func (s *Set) OpenApproval(ctx context.Context, a toolconv.Approval) error {
	waiting := 0
	for _, cd := range s.open {
		if cd.kind == cardApproval && cd.req.ToolName == a.Tool {
			waiting++
		}
	}
	if waiting >= a.Max {
		return a.Full(waiting)
	}
	s.openCard(ctx, &card{
		id:       a.ID,
		kind:     cardApproval,
		req:      streamjson.PermissionRequest{RequestID: a.ID, ToolName: a.Tool, Input: a.Input},
		body:     a.Body,
		approval: &a,
	})
	if s.open[a.ID] == nil {
		return fmt.Errorf("%w: the approval card could not be shown (chat error); try again later", toolconv.ErrRefused)
	}
	if a.Opened != nil {
		a.Opened(s.h.Log())
	}
	return nil
}

// decideApproval applies a choice to an approval card: the feature's Allow
// or Deny says what it did. It returns a problem to tell the clicker, or "".
func (s *Set) decideApproval(ctx context.Context, cd *card, choice string, who worker.Person) string {
	d := toolconv.Decider{ID: who.ID, Mention: mention(who), Card: cd.id, Log: s.h.Log()}
	var out toolconv.Decision
	switch choice {
	case bridges.ChoiceAllow:
		out = cd.approval.Allow(ctx, d)
	case bridges.ChoiceDeny:
		out = cd.approval.Deny(ctx, d)
	default:
		return "That choice is not available on this request."
	}
	decision := store.DecisionDeny
	if out.Allowed {
		decision = store.DecisionAllow
	}
	s.audit(ctx, cd.id, decision, who.ID, out.Audit)
	s.retireCard(ctx, cd, out.Status)
	return ""
}
