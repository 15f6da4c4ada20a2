package web

import (
	"context"

	"github.com/agentbridge/agentbridge/bridges"
)

// SetTyping implements bridges.Typer: the pages show that a turn runs (and
// its Stop button) until it ends.
func (c *Console) SetTyping(_ context.Context, key bridges.ConversationKey, on bool) error {
	c.mu.Lock()
	if on {
		c.typing[key] = true
	} else {
		delete(c.typing, key)
	}
	c.mu.Unlock()
	c.hub.publish(threadTopic(key.Thread), event{kind: evTyping, thread: key.Thread, on: on})
	return nil
}

// working reports whether a turn runs in key's conversation.
func (c *Console) working(key bridges.ConversationKey) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.typing[key]
}
