package web

import (
	"context"
	"errors"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
)

// StartWait bounds how long a message or click waits for the core while
// the bridge starts: Announce prints the sign-in link before the bots
// run, so a person quick to send gets their message taken as soon as the
// core runs the console, not "not running yet". Before Announce (no
// bridge is starting) and after the core ran the console once, a request
// without a core is answered at once.
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

// coreHandler returns the core while Run runs, or nil. While the bridge
// starts (announced, never run yet) it waits for Run, at most StartWait
// or until ctx ends.
func (c *Console) coreHandler(ctx context.Context) bridges.Handler {
	c.mu.Lock()
	h, announced := c.handler, c.announced
	c.mu.Unlock()
	if h == nil && announced {
		t := time.NewTimer(StartWait)
		defer t.Stop()
		select {
		case <-c.running: // at once when it ran before: the core stopped
		case <-t.C:
		case <-ctx.Done():
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		h = c.handler
	}
	return h
}
