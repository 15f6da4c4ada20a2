package whatsapp

import (
	"context"
	"fmt"

	"github.com/agentbridge/agentbridge/bridges"
)

// mayWrite enforces that the bot writes only to chats that wrote to it
// first (WhatsApp bans accounts that message people unprompted): the
// core must own a conversation in that chat, which exists only once it
// accepted a message from there. It returns an error wrapping
// ErrNotAllowed otherwise, and also before Run (no core to ask).
func (b *Bridge) mayWrite(ctx context.Context, key bridges.ConversationKey) error {
	h := b.handler()
	if h == nil {
		return fmt.Errorf("%w: the adapter is not running", ErrNotAllowed)
	}
	owned, err := h.Owns(ctx, bridges.ConversationKey{Bot: b.bot, Channel: key.Channel})
	if err != nil {
		return fmt.Errorf("check that %s wrote first: %w", key.Channel, err)
	}
	if !owned {
		return fmt.Errorf("%w: %s never wrote to the bot", ErrNotAllowed, key.Channel)
	}
	return nil
}
