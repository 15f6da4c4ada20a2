package web

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strings"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/store"
)

// convView is a conversation as the operator pages name it: by what it is
// about, where it is, and a link to it when the admin can open it.
type convView struct {
	Title string // the first message a person wrote, cut; "" when unknown
	Where string // bot · channel (· thread)
	Link  string // the admin's own web chat; "" elsewhere
}

// convOf describes the conversation id with key for the signed-in user.
// A web conversation is linked when it is the user's own (web chats are
// private to their owner); other platforms' permalinks are not known.
func (c *Console) convOf(ctx context.Context, user, id string, key bridges.ConversationKey) convView {
	v := convView{Where: key.Bot + " · " + key.Channel}
	if key.Thread != "" {
		v.Where += " · " + shortID(key.Thread)
	}
	if id != "" {
		title, err := c.st.ConversationTitle(ctx, id)
		if err != nil {
			c.log.Warn("read conversation title", "conversation", id, "err", err)
		}
		v.Title = oneLine(title, 80)
	}
	if c.bot != nil && key.Bot == c.bot.Name && key.Channel == user && threadRE.MatchString(key.Thread) {
		v.Link = "/chat/" + key.Thread
	}
	return v
}

// shortID cuts a long thread id (a uuid, a Slack ts is short enough).
func shortID(s string) string {
	if len(s) > 20 {
		return s[:8] + "…"
	}
	return s
}

// decisionWords says in words what was decided on a request: a question's
// answer ("answered: Postgres"), a plan approved or rejected, a tool call
// allowed once, always, denied, or closed without a decision.
func decisionWords(a store.Approval) string {
	allowed := a.Decision == store.DecisionAllow || a.Decision == store.DecisionAlways
	switch {
	case a.ToolName == "AskUserQuestion" && allowed:
		var answers map[string]string
		if json.Unmarshal([]byte(a.Message), &answers) == nil && len(answers) > 0 {
			vals := make([]string, 0, len(answers))
			for _, q := range slices.Sorted(maps.Keys(answers)) {
				vals = append(vals, answers[q])
			}
			return "answered: " + truncate(strings.Join(vals, "; "), 200)
		}
		return "answered"
	case a.ToolName == "ExitPlanMode" && allowed:
		return "plan approved"
	case a.ToolName == "ExitPlanMode" && a.Decision == store.DecisionDeny:
		return "plan rejected"
	}
	switch a.Decision {
	case store.DecisionAllow:
		return "allowed once"
	case store.DecisionAlways:
		return "always allowed (a rule for the conversation)"
	case store.DecisionDeny:
		return "denied"
	case store.DecisionTimeout:
		return "denied: nobody answered in time"
	case store.DecisionCancelled:
		return "withdrawn by the agent"
	case store.DecisionRuleAllow:
		return "allowed by a policy rule"
	case store.DecisionRuleDeny:
		return "denied by a policy rule"
	case store.DecisionGrant:
		return "allowed by an earlier “always allow”"
	case store.DecisionExpired:
		return "closed: the agent stopped"
	}
	return string(a.Decision)
}
