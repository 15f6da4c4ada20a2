package web

import (
	"context"
	"net/http"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/adapters/web/admin"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/internal/textcut"
)

// The operator pages are package admin; this file is their host: the
// console renders them, gives them the config and names conversations for
// them.

// SetOperator gives the operator pages (and the conversation menu's stop)
// the core. Call it before serving.
func (c *Console) SetOperator(op admin.Operator) {
	c.op = op
	c.admin.SetOperator(op)
}

// SetConfigStatus gives the operator view the reloads' state; call it
// before serving.
func (c *Console) SetConfigStatus(f func() admin.ConfigStatus) { c.admin.SetConfigStatus(f) }

// SetReplicas gives the operator view this replica's status; nil (one
// bridge) shows none. Call it before serving.
func (c *Console) SetReplicas(f func(context.Context) (admin.ReplicaStatus, error)) {
	c.admin.SetReplicas(f)
}

// adminHost is the Console as admin.Host.
type adminHost struct{ c *Console }

var _ admin.Host = adminHost{}

func (h adminHost) Render(w http.ResponseWriter, r *http.Request, status int, name, nav string, data any) {
	h.c.render(w, r, status, name, nav, data)
}

func (h adminHost) ErrorPage(w http.ResponseWriter, r *http.Request, status int, msg string) {
	h.c.errorPage(w, r, status, msg)
}

func (h adminHost) Config() *config.Config { return h.c.config() }

func (h adminHost) Conversation(ctx context.Context, user, id string, key bridges.ConversationKey) admin.ConvView {
	return h.c.convOf(ctx, user, id, key)
}

func (h adminHost) Starting() map[bridges.ConversationKey]time.Time { return h.c.Starting() }

// adminRoutes registers the operator pages: admins only, every action a
// CSRF-checked POST.
func (c *Console) adminRoutes(mux *http.ServeMux) {
	c.admin.Routes(mux,
		func(h http.Handler) http.Handler { return c.RequireRole(config.RoleAdmin, h) },
		func(h http.Handler) http.Handler { return c.RequireRole(config.RoleAdmin, c.csrf(h)) })
}

// convOf describes the conversation id with key for the signed-in user.
// A web conversation is named by its title and linked when the user sees
// it (their own or shared with them); other platforms' permalinks are not
// known.
func (c *Console) convOf(ctx context.Context, user, id string, key bridges.ConversationKey) admin.ConvView {
	v := admin.ConvView{Where: key.Bot + " · " + key.Channel}
	if key.Thread != "" {
		v.Where += " · " + shortID(key.Thread)
	}
	if id != "" {
		title, err := c.st.ConversationTitle(ctx, id)
		if err != nil {
			c.log.Warn("read conversation title", "conversation", id, "err", err)
		}
		v.Title = textcut.OneLine(title, 80)
	}
	if bot := c.bot.Load(); bot != nil && key.Bot == bot.Name && threadRE.MatchString(key.Thread) {
		// A web conversation: by its title, linked when the admin sees it
		// (their own, or shared with them).
		if th, err := c.st.WebThreadFor(ctx, key.Bot, key.Thread, user); err == nil && th.Owner == key.Channel {
			if t := titleOf(th); t != "" {
				v.Title = t
			}
			if th.Role != "" {
				v.Link = "/chat/" + key.Thread
			}
		}
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
