package web

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
)

// StartWait bounds how long a message or click waits for the core between
// Announce (the sign-in link shows before the bots run) and the core's
// first Run (afterStart), instead of "not running yet".
const StartWait = 15 * time.Second

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
	c.ran.Do(func() { close(c.running) })
	<-ctx.Done()
	c.mu.Lock()
	c.handler = nil
	c.mu.Unlock()
	return nil
}

// afterStart holds a request that acts through the core while the bridge
// starts (StartWait), before it is authenticated and checked, so that it
// is decided when it acts.
func (c *Console) afterStart(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.mu.Lock()
		starting := c.handler == nil && c.announced
		c.mu.Unlock()
		if starting {
			t := time.NewTimer(StartWait)
			defer t.Stop()
			select {
			case <-c.running: // at once when it ran before: the core stopped
			case <-t.C:
			case <-r.Context().Done():
			}
		}
		next.ServeHTTP(w, r)
	})
}

// coreHandler returns the core while Run runs, or nil.
func (c *Console) coreHandler() bridges.Handler {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.handler
}
