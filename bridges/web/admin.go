package web

import (
	"net/http"

	"github.com/agentbridge/agentbridge/config"
)

// adminRoutes registers the operator pages (admins only). The operator
// view (bots, live agents, pending approvals, usage, audit log, effective
// config) grows here, one page per file.
func (c *Console) adminRoutes(mux *http.ServeMux) {
	mux.Handle("GET /admin", c.RequireRole(config.RoleAdmin, http.HandlerFunc(c.adminHome)))
}

// adminBot is one row of the operator start page.
type adminBot struct {
	Name, Platform, Agent string
}

// adminHome lists the configured bots.
func (c *Console) adminHome(w http.ResponseWriter, r *http.Request) {
	var bots []adminBot
	for _, b := range c.cfg.Bots {
		bots = append(bots, adminBot{b.Name, b.Platform, b.Agent})
	}
	c.render(w, r, http.StatusOK, "admin", "admin", struct{ Bots []adminBot }{bots})
}
