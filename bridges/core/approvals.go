package core

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strings"

	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/bridges"
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
	subject := permissionSubject(req.ToolName, req.Input)
	grants := cv.activeGrants(ctx)
	v, grant := decidePolicy(cv.profile.Rules, grants, req.ToolName, subject)
	switch {
	case v.Action == policy.ActionAllow && grant != nil:
		cv.grantDecision(ctx, req, v, *grant)
		return
	case v.Action == policy.ActionAllow || v.Action == policy.ActionDeny:
		cv.ruleDecision(ctx, req, v)
		return
	case isAgentTool(req.ToolName) && v.Rule.Action != policy.ActionAsk:
		// Normally allowed by --allowed-tools already; asked anyway (a
		// mode that asks for everything), it needs no card either.
		cv.autoDecision(ctx, req, streamjson.Decision{Allow: true, UpdatedInput: req.Input}, store.DecisionRuleAllow,
			"bridge tool (acts on this conversation only)", "")
		return
	}
	always, grantsToStore, label := alwaysPermissions(req.Suggestions)
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
	cv.openCard(ctx, &card{
		id:          req.RequestID,
		kind:        cardPermission,
		req:         req,
		body:        permissionBody(req.ToolName, req.Input, req.Description, reason, cv.profile.Workdir),
		always:      always,
		alwaysLabel: label,
		grants:      grantsToStore,
	})
}

// permissionSubject is what policy rules match for a tool: the command for
// Bash, the file path for file tools, the URL for WebFetch.
func permissionSubject(tool string, input json.RawMessage) string {
	in := inputMap(input)
	switch tool {
	case "Bash":
		return str(in, "command")
	case "Write", "Edit", "MultiEdit", "Read":
		return str(in, "file_path")
	case "NotebookEdit":
		return str(in, "notebook_path")
	case "WebFetch":
		return str(in, "url")
	case "WebSearch":
		return str(in, "query")
	default:
		return ""
	}
}

// ruleDecision answers a request by the profile's policy rules (verdict v,
// allow or deny), without a card.
func (cv *conversation) ruleDecision(ctx context.Context, req streamjson.PermissionRequest, v policy.Verdict) {
	desc := "rule " + ruleText(v.Rule)
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
		cv.beginTurn(ctx).addNote("› " + codeSpan(req.ToolName+" denied by policy: "+oneLine(permissionSubject(req.ToolName, req.Input), 100)))
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

// openCard posts a card, records the request and starts its timeout. A
// card that cannot be posted is denied at once (nobody could answer it).
func (cv *conversation) openCard(ctx context.Context, cd *card) {
	cd.requesters = cv.requesters()
	if run := cv.scheduledRun(); run != "" && cd.kind != cardSchedule {
		cd.body += "\n_⏰ Asked during a run of schedule " + run + ": " + deciderText(cd.requesters) + " may decide._"
	}
	cv.cardSeq++
	cd.seq = cv.cardSeq
	if t := cv.turn; t != nil && (t.live.posted || cv.streams() && hasText(t.segs)) {
		// Close the live message so the rest of the turn appears below the
		// card. On a quick turn its first post is not due yet: post the text
		// that introduces the card now, or it would show below the card.
		text := tail(render(t.segs), cv.maxRunes())
		if t.live.posted {
			cv.finishLive(ctx, text)
		} else if text != "" {
			cv.cancelTimer(timerLive, "")
			cv.budget.take(cv.core.clock.Now(), cv.limits.EditInterval, true)
			if _, err := cv.post(ctx, bridges.Message{Text: text, ReplyTo: t.replyTo}); err != nil {
				cv.log.Warn("post the text before a card", "err", err)
			}
		}
		t.live = liveMsg{}
		t.segs, t.streaming, t.toolSeg = nil, false, make(map[string]int)
	}
	if d := cv.profile.ApprovalTimeout; d > 0 {
		cv.after(d, timerApproval, cd.id) // counted from when the card shows
	}
	cv.auditRequest(ctx, store.Approval{
		ID: cd.id, ConversationID: cv.id, ToolName: cd.req.ToolName, Input: cd.req.Input,
		RequestedBy: strings.Join(authorIDs(cd.requesters), ","),
	})
	cv.budget.take(cv.core.clock.Now(), cv.limits.EditInterval, true)
	ref, err := cv.post(ctx, cd.message(cv.limits, cv.maxRunes()))
	if err != nil {
		cv.cancelTimer(timerApproval, cd.id)
		cv.log.Error("post approval card; denying the request", "request", cd.id, "err", err)
		msg := "The approval request could not be shown to the user (chat error), so the call was denied. Try again later."
		if cd.answersCLI() {
			cv.respond(ctx, cd.id, streamjson.Decision{Message: msg})
		}
		cv.audit(ctx, cd.id, store.DecisionDeny, "", msg)
		return
	}
	cd.ref, cd.posted = ref, true
	st, id, msgID := cv.core.st, cd.id, ref.ID
	cv.recordOrLog(ctx, "store card reference", func(ctx context.Context) error {
		return st.SetApprovalCardRef(ctx, id, encodeRef(ref), msgID)
	}, "request", id)
	cv.cards[cd.id] = cd
}

// hasText reports whether segs hold assistant text (not only tool lines).
func hasText(segs []segment) bool {
	for _, s := range segs {
		if s.kind == segText && strings.TrimSpace(s.text) != "" {
			return true
		}
	}
	return false
}

// onAction handles a click on one of this conversation's cards.
func (cv *conversation) onAction(ctx context.Context, a bridges.Action) {
	cd := cv.cards[a.CardID]
	if cd == nil {
		replyPrivately(ctx, cv.log, a, "This request is no longer open.")
		return
	}
	who := author{a.UserID, a.UserName}
	if !cv.mayDecide(cd, who.id) {
		cv.log.Info("click refused: not allowed to decide", "user", a.UserID, "card", cd.id)
		replyPrivately(ctx, cv.log, a, "Sorry, only "+names(cd.requesters)+", approvers or admins can answer this request.")
		return
	}
	var problem string
	switch cd.kind {
	case cardQuestion:
		problem = cv.clickQuestion(ctx, cd, a.Choice, who)
	case cardSchedule:
		problem = cv.decideSchedule(ctx, cd, a.Choice, who)
	default:
		problem = cv.decide(ctx, cd, a.Choice, who)
	}
	if problem != "" {
		replyPrivately(ctx, cv.log, a, problem)
	}
}

// mayDecide: the people whose messages started the turn, approvers, admins.
func (cv *conversation) mayDecide(cd *card, user string) bool {
	_, requester := cd.requesters[user]
	return requester || isApprover(cv.bot, user)
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
	cv.core.opts.Metrics.approval(cv.bot.Name, string(d))
	st := cv.core.st
	cv.recordOrLog(ctx, "audit permission decision", func(ctx context.Context) error {
		_, err := st.RecordApprovalDecision(ctx, id, d, by, msg)
		return err
	}, "request", id, "decision", d)
}

// retireCard shows how a card ended (no buttons) and forgets it. Where the
// card can no longer be edited, the status is posted as a new message
// quoting the card.
func (cv *conversation) retireCard(ctx context.Context, cd *card, status string) {
	delete(cv.cards, cd.id)
	cv.cancelTimer(timerApproval, cd.id)
	if !cd.posted {
		return
	}
	cv.budget.take(cv.core.clock.Now(), cv.limits.EditInterval, true)
	text := truncate(decidedText(cd.body, status), cv.maxRunes())
	instead := bridges.Message{Text: truncate(status, cv.maxRunes()), ReplyTo: cd.ref.ID}
	if _, err := cv.editOrPost(ctx, cd.ref, bridges.Message{Text: text, CardID: cd.id}, instead); err != nil {
		cv.log.Warn("update decided card", "card", cd.id, "err", err)
	}
}

// closeCard ends a card without answering the CLI (it withdrew the request,
// or the process is gone).
func (cv *conversation) closeCard(ctx context.Context, id string, audit store.Decision, by, status string) {
	cd := cv.cards[id]
	if cd == nil {
		return
	}
	cv.audit(ctx, id, audit, by, status)
	cv.retireCard(ctx, cd, status)
}

// expireCard denies a card nobody answered within approval_timeout.
func (cv *conversation) expireCard(ctx context.Context, id string) {
	cd := cv.cards[id]
	if cd == nil {
		return
	}
	wait := formatWait(cv.profile.ApprovalTimeout)
	msg := "Nobody approved this tool call within " + wait + " (the bridge's approval timeout), so it was denied. " +
		"Do not retry it now: tell the user what you wanted to do so they can approve it when they are back."
	switch cd.kind {
	case cardQuestion:
		msg = "The user did not answer within " + wait + ". Continue without the answer or ask again later."
	case cardSchedule:
		msg = "Nobody approved the schedule within " + wait + ", so none was created."
	}
	if cd.answersCLI() {
		cv.respond(ctx, id, streamjson.Decision{Message: msg})
	}
	cv.audit(ctx, id, store.DecisionTimeout, "", msg)
	cv.log.Info("permission request expired", "request", id, "after", wait)
	cv.retireCard(ctx, cd, "⌛ Expired: no answer within "+wait+".")
}

// expireAllCards closes every open card, e.g. when the process is gone.
func (cv *conversation) expireAllCards(ctx context.Context, status string) {
	ids := make([]string, 0, len(cv.cards))
	for id := range cv.cards {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		cv.closeCard(ctx, id, store.DecisionExpired, "", status)
	}
}

// requesters are the people who may decide the turn's requests besides the
// approvers: the deciders of the messages the turn handles (their authors;
// for a schedule's firing its creator when a person made it, else nobody).
// For a turn the agent started itself (after a background task): the
// deciders of the last message sent to it, and the conversation's owner
// only when that was a person's message or nothing was sent since the
// worker started.
func (cv *conversation) requesters() map[string]author {
	out := make(map[string]author)
	switch {
	case cv.turn != nil && (cv.turn.fromLedger || len(cv.turn.requesters) > 0):
		maps.Copy(out, cv.turn.requesters)
		return out
	case cv.lastSent != nil:
		maps.Copy(out, cv.lastSent.deciders())
		if cv.lastSent.origin != OriginPerson {
			return out
		}
	}
	if o := cv.row.OwnerUserID; o != "" {
		if _, ok := out[o]; !ok {
			out[o] = author{id: o}
		}
	}
	return out
}

// scheduledRun names the schedule whose run the current turn is ("" if
// none), for its cards.
func (cv *conversation) scheduledRun() string {
	switch {
	case cv.turn != nil && cv.turn.fromLedger:
		return cv.turn.scheduled
	case cv.lastSent != nil:
		return cv.lastSent.scheduledRun()
	}
	return ""
}

func authorIDs(m map[string]author) []string {
	ids := make([]string, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// deciderText says who may decide a card besides nobody: its requesters,
// approvers and admins.
func deciderText(requesters map[string]author) string {
	if len(requesters) == 0 {
		return "only the bot's approvers and admins"
	}
	return names(requesters) + ", approvers and admins"
}

func names(m map[string]author) string {
	var ns []string
	for _, id := range authorIDs(m) {
		ns = append(ns, mention(m[id]))
	}
	if len(ns) == 0 {
		return "the requester"
	}
	return strings.Join(ns, ", ")
}

// encodeRef stores a card's message reference in the audit table, so a
// restarted bridge can close the card.
func encodeRef(ref bridges.MessageRef) string {
	b, err := json.Marshal(ref)
	if err != nil {
		return ""
	}
	return string(b)
}

func decodeRef(s string) (bridges.MessageRef, bool) {
	var ref bridges.MessageRef
	if s == "" || json.Unmarshal([]byte(s), &ref) != nil || ref.ID == "" {
		return bridges.MessageRef{}, false
	}
	return ref, true
}
