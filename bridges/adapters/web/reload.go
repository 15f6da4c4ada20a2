package web

import (
	"context"
	"fmt"

	"github.com/agentbridge/agentbridge/bridges/adapters/web/auth"
	"github.com/agentbridge/agentbridge/config"
)

// config is the config in force.
func (c *Console) config() *config.Config { return c.cfg.Load() }

// PrepareUsers builds the user set of a reloaded config: web.users as it
// now says (an empty list falls back to the generated admin in data_dir).
// It changes nothing; the returned apply makes it current, with cfg for
// the operator pages, and ends at once the sessions of users removed or
// whose token changed (their cookies are refused from the next request
// on, and the sessions are deleted). It also takes cfg's web bot: a web bot added gets its chat
// pages at once (its adapter, the console, is then run by the core); one
// removed refuses new messages at once while its current turns finish.
// The listener is not reloaded.
func (c *Console) PrepareUsers(cfg *config.Config) (apply func(context.Context) error, err error) {
	us, _, err := auth.NewUsers(cfg.Web.Users, cfg.DataDir)
	if err != nil {
		return nil, fmt.Errorf("web console: reload users: %w", err)
	}
	return func(ctx context.Context) error {
		c.users.Replace(us)
		c.cfg.Store(cfg)
		c.bot.Store(cfg.WebBot())
		n, err := c.sess.EndStale(ctx)
		if err != nil {
			return fmt.Errorf("web console: reload users: %w", err)
		}
		if n > 0 {
			c.log.Info("web sessions ended: their user was removed or has a new token", "sessions", n)
		}
		c.access.Changed() // open streams ask again: who may see what may have changed
		return nil
	}, nil
}
