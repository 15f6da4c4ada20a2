package core

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/agenttools"
	"github.com/agentbridge/agentbridge/bridges/grants"
	"github.com/agentbridge/agentbridge/bridges/render"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/config/policy"
	"github.com/agentbridge/agentbridge/store"
)

// acceptEditsPermission is the updatedPermissions entry that switches the
// session to acceptEdits (plan approval "Approve + accept edits").
var acceptEditsPermission = json.RawMessage(`{"type":"setMode","mode":"acceptEdits","destination":"session"}`)

// onPermission handles a can_use_tool request: a policy rule answers it, or
// a card asks the people who may decide.
func (cv *conversation) onPermission(ctx context.Context, req streamjson.PermissionRequest) {
	cv.beginTurn(ctx)
	switch req.ToolName {
	case "AskUserQuestion":
		cv.openQuestion(ctx, req)
		return
	case "ExitPlanMode":
		cv.openPlan(ctx, req)
		return
	}
	subject := render.PermissionSubject(req.ToolName, req.Input)
	v, grant := grants.Decide(cv.profile.Rules, cv.activeGrants(ctx), req.ToolName, subject)
	switch {
	case v.Action == policy.ActionAllow && grant != nil:
		cv.grantDecision(ctx, req, v, *grant)
		return
	case v.Action == policy.ActionAllow || v.Action == policy.ActionDeny:
		cv.ruleDecision(ctx, req, v)
		return
	case agenttools.IsOwn(req.ToolName) && v.Rule.Action != policy.ActionAsk:
		// Normally allowed by --allowed-tools already; asked anyway (a
		// mode that asks for everything), it needs no card either.
		cv.autoDecision(ctx, req, streamjson.Decision{Allow: true, UpdatedInput: req.Input}, store.DecisionRuleAllow,
			"bridge tool (acts on this conversation only)", "")
		return
	}
	always, grantsToStore, label := grants.AlwaysPermissions(req.Suggestions)
	if v.Rule.Action == policy.ActionAsk {
		// A profile rule says to ask every time: a grant would never apply.
		always, grantsToStore, label = nil, nil, ""
	}
	reason := req.DecisionReason
	if reason == "" && req.BlockedPath != "" {
		reason = "Path: " + req.BlockedPath
	}
	if v.Why != "" && (v.Action == policy.ActionAsk || len(cv.profile.Rules) > 0) {
		reason = strings.TrimSpace(reason + " (policy: " + v.Why + ")")
	}
	if req.AgentID != "" {
		reason = strings.TrimSpace(reason + " (asked by a subagent)")
	}
	if cv.turn.live.toolWaiting(req.ToolUseID) {
		cv.touchLive(ctx)
	}
	cv.openCard(ctx, &card{
		id:          req.RequestID,
		kind:        cardPermission,
		req:         req,
		body:        render.PermissionBody(req.ToolName, req.Input, req.Description, reason, cv.profile.Workdir),
		always:      always,
		alwaysLabel: label,
		grants:      grantsToStore,
	})
}

// ruleDecision answers a request by the profile's policy rules (verdict v,
// allow or deny), without a card.
func (cv *conversation) ruleDecision(ctx context.Context, req streamjson.PermissionRequest, v policy.Verdict) {
	desc := "rule " + grants.RuleText(v.Rule)
	if v.Action != policy.ActionDeny {
		cv.autoDecision(ctx, req, streamjson.Decision{Allow: true, UpdatedInput: req.Input}, store.DecisionRuleAllow, desc, "")
		return
	}
	why := desc
	if v.Why != "" {
		why = v.Why
	}
	msg := "Denied by the bridge's policy (" + why + "). Do not retry this call; tell the user what you needed instead."
	if verbosity(cv.bot) != config.VerbosityQuiet {
		cv.beginTurn(ctx).addNote("› " + render.CodeSpan(req.ToolName+" denied by policy: "+render.OneLine(render.PermissionSubject(req.ToolName, req.Input), 100)))
		cv.touchLive(ctx)
	}
	cv.autoDecision(ctx, req, streamjson.Decision{Message: msg}, store.DecisionRuleDeny, desc, msg)
}

// autoDecision answers a request without a card (a policy rule or a grant
// decided it), records it in the audit log as requested and decided at
// once, with desc naming what decided, and counts it.
func (cv *conversation) autoDecision(ctx context.Context, req streamjson.PermissionRequest, d streamjson.Decision, audit store.Decision, desc, msg string) {
	cv.respond(ctx, req.RequestID, d)
	cv.auditRequest(ctx, store.Approval{
		ID: req.RequestID, ConversationID: cv.id, ToolName: req.ToolName, Input: req.Input,
		RequestedBy: strings.Join(authorIDs(cv.requesters()), ","),
	})
	cv.audit(ctx, req.RequestID, audit, desc, msg)
	cv.log.Info("permission decided without a card", "tool", req.ToolName, "decision", audit, "by", desc)
}

// decide applies a choice to a permission or plan card. It returns a
// problem to tell the clicker, or "".
func (cv *conversation) decide(ctx context.Context, cd *card, choice string, who author) string {
	by := mention(who)
	in := cd.req.Input
	switch {
	case cd.kind == cardPermission && choice == bridges.ChoiceAllow:
		cv.resolve(ctx, cd, streamjson.Decision{Allow: true, UpdatedInput: in}, store.DecisionAllow, who, "", "✅ Allowed by "+by)
	case cd.kind == cardPermission && choice == bridges.ChoiceAlways && cd.always != nil:
		granted, note := cv.storeGrants(ctx, cd, who)
		cv.resolve(ctx, cd, streamjson.Decision{Allow: true, UpdatedInput: in, UpdatedPermissions: cd.always},
			store.DecisionAlways, who, granted, "✅ Always allowed by "+by+note)
	case cd.kind == cardPermission && choice == bridges.ChoiceDeny:
		msg := "Denied by " + by
		cv.resolve(ctx, cd, streamjson.Decision{Message: msg}, store.DecisionDeny, who, msg, "❌ "+msg)
	case cd.kind == cardPlan && choice == bridges.ChoiceApprove:
		cv.resolve(ctx, cd, streamjson.Decision{Allow: true, UpdatedInput: in}, store.DecisionAllow, who, "", "✅ Plan approved by "+by)
	case cd.kind == cardPlan && choice == bridges.ChoiceApproveEdits:
		cv.resolve(ctx, cd, streamjson.Decision{Allow: true, UpdatedInput: in, UpdatedPermissions: []json.RawMessage{acceptEditsPermission}},
			store.DecisionAlways, who, "accept edits", "✅ Plan approved by "+by+" (edits accepted automatically)")
	case cd.kind == cardPlan && choice == bridges.ChoiceReject:
		msg := "Rejected by " + by + ". Stay in plan mode: revise the plan with the user and present it again."
		cv.resolve(ctx, cd, streamjson.Decision{Message: msg}, store.DecisionDeny, who, msg, "❌ Plan rejected by "+by)
	default:
		return "That choice is not available on this request."
	}
	return ""
}

// resolve answers the CLI, audits the decision and closes the card.
func (cv *conversation) resolve(ctx context.Context, cd *card, d streamjson.Decision, audit store.Decision, who author, msg, status string) {
	cv.respond(ctx, cd.id, d)
	if cv.turn != nil && cv.turn.live.toolDecided(cd.req.ToolUseID, d.Allow) {
		cv.touchLive(ctx)
	}
	cv.audit(ctx, cd.id, audit, who.id, msg)
	cv.log.Info("permission decided", "tool", cd.req.ToolName, "decision", audit, "by", who.id)
	cv.retireCard(ctx, cd, status)
}

// respond answers a permission request on the live session.
func (cv *conversation) respond(ctx context.Context, id string, d streamjson.Decision) {
	if cv.sess == nil {
		return
	}
	if cd := cv.cards[id]; cd != nil && cd.elicit != nil {
		cv.respondElicitation(ctx, cd, d) // agentstate.go: an elicitation, not a permission
		return
	}
	if err := cv.sess.Respond(ctx, id, d); err != nil {
		cv.log.Warn("answer permission request", "request", id, "err", err)
	}
}

// auditRequest records a permission request in the approvals table (on a
// full disk, once it has room: recordInOrder).
func (cv *conversation) auditRequest(ctx context.Context, a store.Approval) {
	st := cv.core.st
	cv.recordOrLog(ctx, "audit permission request", func(ctx context.Context) error {
		_, err := st.RecordApprovalRequest(ctx, a)
		return err
	}, "request", a.ID)
}

// audit records a decision in the approvals table (on a full disk, once
// it has room, after its request).
func (cv *conversation) audit(ctx context.Context, id string, d store.Decision, by, msg string) {
	cv.core.opts.Metrics.Approval(cv.bot.Name, string(d))
	st := cv.core.st
	cv.recordOrLog(ctx, "audit permission decision", func(ctx context.Context) error {
		_, err := st.RecordApprovalDecision(ctx, id, d, by, msg)
		return err
	}, "request", id, "decision", d)
}

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

// cmdRules runs "!rules" (list the profile's policy rules and this
// conversation's grants) and "!rules rm N" (remove grant N; the caller
// checked that the author is an admin).
func (cv *conversation) cmdRules(ctx context.Context, l cmdLine, who author) {
	f := l.args
	if len(f) == 0 {
		cv.notice(ctx, cv.rulesText(ctx))
		return
	}
	n, err := 0, error(nil)
	if len(f) == 2 {
		n, err = strconv.Atoi(strings.TrimPrefix(f[1], "#"))
	}
	if len(f) != 2 || !strings.EqualFold(f[0], "rm") || err != nil || n < 1 {
		cv.notice(ctx, "Usage: `"+bridges.CommandPrefix+"rules` lists the rules; `"+bridges.CommandPrefix+"rules rm N` removes grant N.")
		return
	}
	g, err := cv.core.st.RemoveGrant(ctx, cv.id, n, who.id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		cv.notice(ctx, fmt.Sprintf("There is no grant #%d in this conversation (`%srules` lists them).", n, bridges.CommandPrefix))
		return
	case err != nil:
		cv.log.Error("remove grant", "grant", n, "err", err)
		cv.notice(ctx, "⚠️ Could not remove the grant (database error).")
		return
	}
	cv.log.Info("grant removed", "grant", g.Num, "tool", g.Tool, "match", g.Match, "by", who.id, "granted_by", g.GrantedBy)
	msg := fmt.Sprintf("🗑 Removed grant #%d (%s, granted by %s); such requests ask again.",
		g.Num, render.CodeSpan(grants.RuleText(grants.Rule(g))), mention(author{id: g.GrantedBy}))
	// The running CLI still holds the rule for its session: restart it
	// (resuming the session) so that it forgets it.
	switch {
	case cv.sess == nil:
	case cv.turn != nil || len(cv.inflight) > 0 || len(cv.cards) > 0:
		cv.restartAfterTurn = true
		msg += " The agent restarts when the current turn ends."
	default:
		cv.restartProcess(ctx)
	}
	cv.notice(ctx, msg)
}

// rulesText lists the profile's policy rules and the conversation's
// active grants (grants.ListText).
func (cv *conversation) rulesText(ctx context.Context) string {
	gs, err := cv.core.st.ActiveGrants(ctx, cv.id)
	if err != nil {
		cv.log.Error("list grants", "err", err)
	}
	return grants.ListText(cv.profile.Name, cv.profile.Rules, gs, err != nil, adminsConfigured(cv.bot))
}
