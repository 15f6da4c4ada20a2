package cards

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core/render"
	"github.com/agentbridge/agentbridge/bridges/core/worker"
	"github.com/agentbridge/agentbridge/bridges/features/cards/grants"
	"github.com/agentbridge/agentbridge/store"
)

// Rules runs "!rules" (list the profile's policy rules and this
// conversation's grants) and "!rules rm N" (remove grant N; the caller
// checked that the author is an admin).
func (s *Set) Rules(ctx context.Context, args []string, who worker.Person) {
	h := s.h
	if len(args) == 0 {
		h.Notice(ctx, s.rulesText(ctx))
		return
	}
	n, err := 0, error(nil)
	if len(args) == 2 {
		n, err = strconv.Atoi(strings.TrimPrefix(args[1], "#"))
	}
	if len(args) != 2 || !strings.EqualFold(args[0], "rm") || err != nil || n < 1 {
		h.Notice(ctx, "Usage: `"+bridges.CommandPrefix+"rules` lists the rules; `"+bridges.CommandPrefix+"rules rm N` removes grant N.")
		return
	}
	g, err := h.Store().RemoveGrant(ctx, h.ID(), n, who.ID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		h.Notice(ctx, fmt.Sprintf("There is no grant #%d in this conversation (`%srules` lists them).", n, bridges.CommandPrefix))
		return
	case err != nil:
		h.Log().Error("remove grant", "grant", n, "err", err)
		h.Notice(ctx, "⚠️ Could not remove the grant (database error).")
		return
	}
	h.Log().Info("grant removed", "grant", g.Num, "tool", g.Tool, "match", g.Match, "by", who.ID, "granted_by", g.GrantedBy)
	msg := fmt.Sprintf("🗑 Removed grant #%d (%s, granted by %s); such requests ask again.",
		g.Num, render.CodeSpan(grants.RuleText(grants.Rule(g))), mention(worker.Person{ID: g.GrantedBy}))
	// The running CLI still holds the rule for its session: restart it
	// (resuming the session) so that it forgets it.
	if h.RestartSoon(ctx) {
		msg += " The agent restarts when the current turn ends."
	}
	h.Notice(ctx, msg)
}

// rulesText lists the profile's policy rules and the conversation's
// active grants (grants.ListText).
func (s *Set) rulesText(ctx context.Context) string {
	gs, err := s.h.Store().ActiveGrants(ctx, s.h.ID())
	if err != nil {
		s.h.Log().Error("list grants", "err", err)
	}
	p := s.h.Profile()
	return grants.ListText(p.Name, p.Rules, gs, err != nil, s.h.Bot().Access.HasAdmins())
}
