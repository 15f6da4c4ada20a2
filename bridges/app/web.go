package app

import (
	"fmt"
	"log/slog"

	"github.com/agentbridge/agentbridge/bridges/adapters/web"
	"github.com/agentbridge/agentbridge/bridges/core/access"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/store"
)

// newWebConsole makes the web console when the config has a web bot or web
// users and an HTTP listener; otherwise it returns nil. demo labels every
// page as a demo (bridge run -demo).
func newWebConsole(cfg *config.Config, st *store.Store, logger *slog.Logger, demo bool, decide *access.Authority) (*web.Console, error) {
	if cfg.HTTP.Listen == "" || cfg.WebBot() == nil && len(cfg.Web.Users) == 0 {
		return nil, nil
	}
	c, err := web.New(web.Options{Config: cfg, Store: st, Logger: logger, Demo: demo, Access: decide})
	if err != nil {
		return nil, fmt.Errorf("web console: %w", err)
	}
	return c, nil
}
