package core

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/grants"
	"github.com/agentbridge/agentbridge/bridges/render"
	"github.com/agentbridge/agentbridge/store"
)

// cmdRules runs "!rules" (list the profile's policy rules and this
// conversation's grants) and "!rules rm N" (remove grant N; the caller
// checked that the author is an admin).
func (cv *conversation) cmdRules(ctx context.Context, l cmdLine, who Person) {
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
	g, err := cv.st.RemoveGrant(ctx, cv.id, n, who.ID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		cv.notice(ctx, fmt.Sprintf("There is no grant #%d in this conversation (`%srules` lists them).", n, bridges.CommandPrefix))
		return
	case err != nil:
		cv.log.Error("remove grant", "grant", n, "err", err)
		cv.notice(ctx, "⚠️ Could not remove the grant (database error).")
		return
	}
	cv.log.Info("grant removed", "grant", g.Num, "tool", g.Tool, "match", g.Match, "by", who.ID, "granted_by", g.GrantedBy)
	msg := fmt.Sprintf("🗑 Removed grant #%d (%s, granted by %s); such requests ask again.",
		g.Num, render.CodeSpan(grants.RuleText(grants.Rule(g))), mention(Person{ID: g.GrantedBy}))
	// The running CLI still holds the rule for its session: restart it
	// (resuming the session) so that it forgets it.
	switch {
	case cv.sess == nil:
	case cv.turn != nil || len(cv.inflight) > 0 || cv.cards.Len() > 0:
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
	gs, err := cv.st.ActiveGrants(ctx, cv.id)
	if err != nil {
		cv.log.Error("list grants", "err", err)
	}
	return grants.ListText(cv.profile.Name, cv.profile.Rules, gs, err != nil, cv.bot.Access.HasAdmins())
}
