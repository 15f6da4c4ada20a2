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
	if !c.ran {
		c.ran = true
		close(c.runningCh())
	}
	c.mu.Unlock()
	<-ctx.Done()
	c.mu.Lock()
	c.handler = nil
	c.mu.Unlock()
	return nil
}

// runningCh is closed once the core first ran the console. c.mu is held.
func (c *Console) runningCh() chan struct{} {
	if c.running == nil {
		c.running = make(chan struct{})
	}
	return c.running
}

// coreHandler returns the core while Run runs, or nil. While the bridge
// starts (announced, never run yet) it waits for Run, at most StartWait
// or until ctx ends.
func (c *Console) coreHandler(ctx context.Context) bridges.Handler {
	c.mu.Lock()
	h, starting, running := c.handler, c.announced && !c.ran, c.runningCh()
	c.mu.Unlock()
	if h != nil || !starting {
		return h
	}
	t := time.NewTimer(StartWait)
	defer t.Stop()
	select {
	case <-running:
	case <-t.C:
	case <-ctx.Done():
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.handler
}
