package core

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/grants"
	"github.com/agentbridge/agentbridge/store"
)

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
		g.Num, codeSpan(grants.RuleText(grants.Rule(g))), mention(author{id: g.GrantedBy}))
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

// rulesText lists the profile's policy rules (in order: the first match
// wins) and the conversation's active grants.
func (cv *conversation) rulesText(ctx context.Context) string {
	var b strings.Builder
	fmt.Fprintf(&b, "📜 **Policy rules** of agent %s (the first match wins):\n", codeSpan(cv.profile.Name))
	if len(cv.profile.Rules) == 0 {
		b.WriteString("_none: every request not covered by the permission mode asks_\n")
	}
	for i, r := range cv.profile.Rules {
		fmt.Fprintf(&b, "%d. %s %s\n", i+1, r.Action, codeSpan(grants.RuleText(r)))
	}
	b.WriteString("**Grants of this conversation** (from Always allow; checked after the policy rules):\n")
	gs, err := cv.core.st.ActiveGrants(ctx, cv.id)
	switch {
	case err != nil:
		cv.log.Error("list grants", "err", err)
		b.WriteString("⚠️ _could not read the grants (database error)_\n")
	case len(gs) == 0:
		b.WriteString("_none_\n")
	}
	for _, g := range gs {
		fmt.Fprintf(&b, "#%d allow %s — granted by %s on %s\n", g.Num, codeSpan(grants.RuleText(grants.Rule(g))),
			mention(author{id: g.GrantedBy}), g.CreatedAt.UTC().Format("2006-01-02 15:04 UTC"))
	}
	if adminsConfigured(cv.bot) {
		b.WriteString("_Admins remove a grant with `" + bridges.CommandPrefix + "rules rm N`._")
	} else {
		b.WriteString("_Removing grants needs admins, and this bot has none configured._")
	}
	return b.String()
}
