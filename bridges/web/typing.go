package web

import (
	"context"

	"github.com/agentbridge/agentbridge/bridges"
)

// SetTyping implements bridges.Typer: the pages show that a turn runs (and
// its Stop button) until it ends.
func (c *Console) SetTyping(ctx context.Context, key bridges.ConversationKey, on bool) error {
	c.setWorking(key, on)
	c.publish(ctx, threadTopic(key.Thread), event{kind: evTyping, thread: key.Thread, on: on, key: key})
	return nil
}

// setWorking notes whether a turn runs in key's conversation, for pages
// that (re)connect.
func (c *Console) setWorking(key bridges.ConversationKey, on bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if on {
		c.typing[key] = true
	} else {
		delete(c.typing, key)
	}
}

// working reports whether a turn runs in key's conversation.
func (c *Console) working(key bridges.ConversationKey) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.typing[key]
}
