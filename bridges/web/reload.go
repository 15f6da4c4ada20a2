package web

import (
	"context"
	"fmt"
	"time"

	"github.com/agentbridge/agentbridge/config"
)

// ConfigStatus is what the operator view shows about the config in force
// and the last reload the bridge refused (see cmd/bridge's reloader).
type ConfigStatus struct {
	Generation uint64
	At         time.Time // when the generation took effect
	Trigger    string    // start, signal, file, request
	Changed    []string  // the keys the generation changed (never values)
	// Refused are the problems of the last refused reload, each with its
	// line ("bridge.yaml:12: bots[0].agent: ..."); empty when the last
	// reload succeeded or none was refused.
	Refused   []string
	RefusedAt time.Time
}

// SetConfigStatus gives the operator view the reloads' state; call it
// before serving.
func (c *Console) SetConfigStatus(f func() ConfigStatus) { c.configStatus = f }

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
	us, _, err := newUsers(cfg.Web.Users, cfg.DataDir)
	if err != nil {
		return nil, fmt.Errorf("web console: reload users: %w", err)
	}
	return func(ctx context.Context) error {
		c.users.replace(us)
		c.cfg.Store(cfg)
		c.bot.Store(cfg.WebBot())
		n, err := c.sess.endStale(ctx)
		if err != nil {
			return fmt.Errorf("web console: reload users: %w", err)
		}
		if n > 0 {
			c.log.Info("web sessions ended: their user was removed or has a new token", "sessions", n)
		}
		return nil
	}, nil
}

func (us *users) replace(from *users) {
	from.mu.RLock()
	list := from.list
	from.mu.RUnlock()
	us.mu.Lock()
	us.list = list
	us.mu.Unlock()
}

// snapshot is the current user list (not to be modified).
func (us *users) snapshot() []*User {
	us.mu.RLock()
	defer us.mu.RUnlock()
	return us.list
}
