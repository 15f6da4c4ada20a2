package cards

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core/render"
	"github.com/agentbridge/agentbridge/bridges/core/toolconv"
	"github.com/agentbridge/agentbridge/bridges/core/worker"
	"github.com/agentbridge/agentbridge/bridges/features/cards/grants"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/config/policy"
	"github.com/agentbridge/agentbridge/internal/textcut"
	"github.com/agentbridge/agentbridge/store"
)

// acceptEditsPermission is the updatedPermissions entry that switches the
// session to acceptEdits (plan approval "Approve + accept edits").
var acceptEditsPermission = json.RawMessage(`{"type":"setMode","mode":"acceptEdits","destination":"session"}`)

// OnPermission handles a can_use_tool request: a policy rule answers it, or
// a card asks the people who may decide.
func (s *Set) OnPermission(ctx context.Context, req streamjson.PermissionRequest) {
	s.h.BeginTurn(ctx)
	switch req.ToolName {
	case "AskUserQuestion":
		s.openQuestion(ctx, req)
		return
	case "ExitPlanMode":
		s.openPlan(ctx, req)
		return
	}
	subject := render.PermissionSubject(req.ToolName, req.Input)
	v, grant := grants.Decide(s.h.Profile().Rules, s.activeGrants(ctx), req.ToolName, subject)
	switch {
	case v.Action == policy.ActionAllow && grant != nil:
		s.grantDecision(ctx, req, v, *grant)
		return
	case v.Action == policy.ActionAllow || v.Action == policy.ActionDeny:
		s.ruleDecision(ctx, req, v)
		return
	case toolconv.IsOwn(req.ToolName) && v.Rule.Action != policy.ActionAsk:
		// Normally allowed by --allowed-tools already; asked anyway (a
		// mode that asks for everything), it needs no card either.
		s.autoDecision(ctx, req, streamjson.Decision{Allow: true, UpdatedInput: req.Input}, store.DecisionRuleAllow,
			"bridge tool (acts on this conversation only)", "")
		return
	}
	always, grantsToStore, label := grants.AlwaysPermissions(req.Suggestions)
	label = sameCommandLabel(req.ToolName, req.Input, label)
	if v.Rule.Action == policy.ActionAsk {
		// A profile rule says to ask every time: a grant would never apply.
		always, grantsToStore, label = nil, nil, ""
	}
	reason := req.DecisionReason
	if reason == "" && req.BlockedPath != "" {
		reason = "Path: " + req.BlockedPath
	}
	if v.Why != "" && (v.Action == policy.ActionAsk || len(s.h.Profile().Rules) > 0) {
		reason = strings.TrimSpace(reason + " (policy: " + v.Why + ")")
	}
	if req.AgentID != "" {
		reason = strings.TrimSpace(reason + " (asked by a subagent)")
	}
	s.h.ToolWaiting(ctx, req.ToolUseID)
	s.openCard(ctx, &card{
		id:          req.RequestID,
		kind:        cardPermission,
		req:         req,
		body:        render.PermissionBody(req.ToolName, req.Input, req.Description, reason, s.h.Profile().Workdir),
		always:      always,
		alwaysLabel: label,
		grants:      grantsToStore,
	})
}

// ruleDecision answers a request by the profile's policy rules (verdict v,
// allow or deny), without a card.
func (s *Set) ruleDecision(ctx context.Context, req streamjson.PermissionRequest, v policy.Verdict) {
	desc := "rule " + grants.RuleText(v.Rule)
	if v.Action != policy.ActionDeny {
		s.autoDecision(ctx, req, streamjson.Decision{Allow: true, UpdatedInput: req.Input}, store.DecisionRuleAllow, desc, "")
		return
	}
	why := desc
	if v.Why != "" {
		why = v.Why
	}
	msg := "Denied by the bridge's policy (" + why + "). Do not retry this call; tell the user what you needed instead."
	if s.h.Bot().Verbosity != config.VerbosityQuiet { // "" is compact
		s.h.Note(ctx, "› "+render.CodeSpan(req.ToolName+" denied by policy: "+textcut.OneLine(render.PermissionSubject(req.ToolName, req.Input), 100)))
	}
	s.autoDecision(ctx, req, streamjson.Decision{Message: msg}, store.DecisionRuleDeny, desc, msg)
}

// autoDecision answers a request without a card (a policy rule or a grant
// decided it), records it in the audit log as requested and decided at
// once, with desc naming what decided, and counts it.
func (s *Set) autoDecision(ctx context.Context, req streamjson.PermissionRequest, d streamjson.Decision, audit store.Decision, desc, msg string) {
	s.respond(ctx, req.RequestID, d)
	s.auditRequest(ctx, store.Approval{
		ID: req.RequestID, ConversationID: s.h.ID(), ToolName: req.ToolName, Input: req.Input,
		RequestedBy: strings.Join(authorIDs(s.h.Requesters()), ","),
	})
	s.audit(ctx, req.RequestID, audit, desc, msg)
	s.h.Log().Info("permission decided without a card", "tool", req.ToolName, "decision", audit, "by", desc)
}

// decide applies a choice to a permission or plan card. It returns a
// problem to tell the clicker, or "".
func (s *Set) decide(ctx context.Context, cd *card, choice string, who worker.Person) string {
	by := mention(who)
	in := cd.req.Input
	switch {
	case cd.kind == cardPermission && choice == bridges.ChoiceAllow:
		s.resolve(ctx, cd, streamjson.Decision{Allow: true, UpdatedInput: in}, store.DecisionAllow, who, "", "✅ Allowed by "+by)
	case cd.kind == cardPermission && choice == bridges.ChoiceAlways && cd.always != nil:
		granted, note := s.storeGrants(ctx, cd, who)
		s.resolve(ctx, cd, streamjson.Decision{Allow: true, UpdatedInput: in, UpdatedPermissions: cd.always},
			store.DecisionAlways, who, granted, "✅ Always allowed by "+by+note)
	case cd.kind == cardPermission && choice == bridges.ChoiceDeny:
		msg := "Denied by " + by
		s.resolve(ctx, cd, streamjson.Decision{Message: msg}, store.DecisionDeny, who, msg, "❌ "+msg)
	case cd.kind == cardPlan && choice == bridges.ChoiceApprove:
		s.resolve(ctx, cd, streamjson.Decision{Allow: true, UpdatedInput: in}, store.DecisionAllow, who, "", "✅ Plan approved by "+by)
	case cd.kind == cardPlan && choice == bridges.ChoiceApproveEdits:
		s.resolve(ctx, cd, streamjson.Decision{Allow: true, UpdatedInput: in, UpdatedPermissions: []json.RawMessage{acceptEditsPermission}},
			store.DecisionAlways, who, "accept edits", "✅ Plan approved by "+by+" (edits accepted automatically)")
	case cd.kind == cardPlan && choice == bridges.ChoiceReject:
		msg := "Rejected by " + by + ". Stay in plan mode: revise the plan with the user and present it again."
		s.resolve(ctx, cd, streamjson.Decision{Message: msg}, store.DecisionDeny, who, msg, "❌ Plan rejected by "+by)
	default:
		return "That choice is not available on this request."
	}
	return ""
}

// resolve answers the CLI, audits the decision and closes the card.
func (s *Set) resolve(ctx context.Context, cd *card, d streamjson.Decision, audit store.Decision, who worker.Person, msg, status string) {
	s.respond(ctx, cd.id, d)
	s.h.ToolDecided(ctx, cd.req.ToolUseID, d.Allow)
	s.audit(ctx, cd.id, audit, who.ID, msg)
	s.h.Log().Info("permission decided", "tool", cd.req.ToolName, "decision", audit, "by", who.ID)
	s.retireCard(ctx, cd, status)
}

// respond answers a permission request on the live session.
func (s *Set) respond(ctx context.Context, id string, d streamjson.Decision) {
	if !s.h.Live() {
		return
	}
	if cd := s.open[id]; cd != nil && cd.elicit != nil {
		s.respondElicitation(ctx, cd, d) // elicit.go: an elicitation, not a permission
		return
	}
	if err := s.h.Respond(ctx, id, d); err != nil {
		s.h.Log().Warn("answer permission request", "request", id, "err", err)
	}
}

// auditRequest records a permission request in the approvals table (on a
// full disk, once it has room: delivery.Journal).
func (s *Set) auditRequest(ctx context.Context, a store.Approval) {
	st := s.h.Store()
	s.h.Record(ctx, "audit permission request", func(ctx context.Context) error {
		_, err := st.RecordApprovalRequest(ctx, a)
		return err
	}, "request", a.ID)
}

// audit records a decision in the approvals table (on a full disk, once
// it has room, after its request).
func (s *Set) audit(ctx context.Context, id string, d store.Decision, by, msg string) {
	s.h.CountApproval(string(d))
	st := s.h.Store()
	s.h.Record(ctx, "audit permission decision", func(ctx context.Context) error {
		_, err := st.RecordApprovalDecision(ctx, id, d, by, msg)
		return err
	}, "request", id, "decision", d)
}

// activeGrants reads the conversation's grants. A store error is logged
// and means "no grants": the request then gets a card, never a wrong allow.
func (s *Set) activeGrants(ctx context.Context) []store.Grant {
	gs, err := s.h.Store().ActiveGrants(ctx, s.h.ID())
	if err != nil {
		s.h.Log().Error("read grants; asking instead", "err", err)
		return nil
	}
	return gs
}

// grantDecision allows a request matching one of the conversation's grants,
// without a card, and audits it.
func (s *Set) grantDecision(ctx context.Context, req streamjson.PermissionRequest, v policy.Verdict, g store.Grant) {
	desc := fmt.Sprintf("grant #%d %s (granted by %s)", g.Num, grants.RuleText(grants.Rule(g)), textcut.OrBlank(g.GrantedBy, "unknown"))
	s.autoDecision(ctx, req, streamjson.Decision{Allow: true, UpdatedInput: req.Input}, store.DecisionGrant, desc, "")
}

// storeGrants records the grants of an "Always allow" click on cd by who.
// It returns what to say about them in the audit and on the card; a store
// error is logged and reported there (the CLI still gets the session rule).
func (s *Set) storeGrants(ctx context.Context, cd *card, who worker.Person) (audit, status string) {
	if len(cd.grants) == 0 {
		return "", ""
	}
	gs := make([]store.Grant, len(cd.grants))
	for i, r := range cd.grants {
		gs[i] = store.Grant{Tool: r.Tool, Match: r.Match, GrantedBy: who.ID, ApprovalID: cd.id}
	}
	stored, err := s.h.Store().AddGrants(ctx, s.h.ID(), gs)
	if err != nil {
		s.h.Log().Error("store grants", "request", cd.id, "err", err)
		return "grant not stored (database error)", " (for this agent process only: the grant could not be stored)"
	}
	for _, g := range stored {
		s.h.Log().Info("grant stored", "grant", g.Num, "tool", g.Tool, "match", g.Match, "by", who.ID, "request", cd.id)
	}
	return grants.StoredText(stored)
}

// sameCommandLabel words the Always allow note of a Bash card whose rule is
// exactly the command the card shows without naming the command again (it
// showed twice, the second time in a rule's syntax).
func sameCommandLabel(tool string, input json.RawMessage, label string) string {
	cmd := render.Str(render.InputMap(input), "command")
	if tool != "Bash" || cmd == "" || strings.Contains(cmd, "\n") ||
		label != "Always allow adds the rule "+render.CodeSpan(textcut.Truncate("Bash("+cmd+")", 200))+" to this conversation" {
		return label
	}
	return "Always allow lets this same command run again in this conversation without asking"
}
