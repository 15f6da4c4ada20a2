package core

import (
	"context"
	"fmt"

	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/bridges/grants"
	"github.com/agentbridge/agentbridge/config/policy"
	"github.com/agentbridge/agentbridge/store"
)

// activeGrants reads the conversation's grants. A store error is logged
// and means "no grants": the request then gets a card, never a wrong allow.
func (cv *conversation) activeGrants(ctx context.Context) []store.Grant {
	gs, err := cv.core.st.ActiveGrants(ctx, cv.id)
	if err != nil {
		cv.log.Error("read grants; asking instead", "err", err)
		return nil
	}
	return gs
}

// grantDecision allows a request matching one of the conversation's grants,
// without a card, and audits it.
func (cv *conversation) grantDecision(ctx context.Context, req streamjson.PermissionRequest, v policy.Verdict, g store.Grant) {
	desc := fmt.Sprintf("grant #%d %s (granted by %s)", g.Num, grants.RuleText(grants.Rule(g)), orDefault(g.GrantedBy, "unknown"))
	cv.autoDecision(ctx, req, streamjson.Decision{Allow: true, UpdatedInput: req.Input}, store.DecisionGrant, desc, "")
}

// storeGrants records the grants of an "Always allow" click on cd by who.
// It returns what to say about them in the audit and on the card; a store
// error is logged and reported there (the CLI still gets the session rule).
func (cv *conversation) storeGrants(ctx context.Context, cd *card, who author) (audit, status string) {
	if len(cd.grants) == 0 {
		return "", ""
	}
	gs := make([]store.Grant, len(cd.grants))
	for i, r := range cd.grants {
		gs[i] = store.Grant{Tool: r.Tool, Match: r.Match, GrantedBy: who.id, ApprovalID: cd.id}
	}
	stored, err := cv.core.st.AddGrants(ctx, cv.id, gs)
	if err != nil {
		cv.log.Error("store grants", "request", cd.id, "err", err)
		return "grant not stored (database error)", " (for this agent process only: the grant could not be stored)"
	}
	for _, g := range stored {
		cv.log.Info("grant stored", "grant", g.Num, "tool", g.Tool, "match", g.Match, "by", who.id, "request", cd.id)
	}
	return grants.StoredText(stored)
}
