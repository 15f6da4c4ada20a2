package web

import (
	"context"
	"errors"

	"github.com/agentbridge/agentbridge/bridges"
)

// Run implements bridges.Platform: the console has nothing to connect; it
// accepts messages from the pages while ctx lasts. It returns nil when ctx
// ends.
func (c *Console) Run(ctx context.Context, h bridges.Handler) error {
	if c.bot.Load() == nil {
		return errors.New("web console: the config has no web bot")
	}
	c.mu.Lock()
	c.handler = h
	c.mu.Unlock()
	<-ctx.Done()
	c.mu.Lock()
	c.handler = nil
	c.mu.Unlock()
	return nil
}

// coreHandler returns the core while Run runs, or nil.
func (c *Console) coreHandler() bridges.Handler {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.handler
}
