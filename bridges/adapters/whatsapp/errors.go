package whatsapp

import (
	"context"
	"errors"
	"fmt"

	"github.com/agentbridge/agentbridge/bridges"
)

// Errors of the message adapter.
var (
	// ErrBadMessage: Post was given a message that cannot be sent (no
	// text, a conversation key that is not a chat).
	ErrBadMessage = errors.New("whatsapp: bad message")
	// ErrTooLarge: FetchFile refused an attachment larger than its limit.
	ErrTooLarge = errors.New("whatsapp attachment is larger than the allowed size")
	// ErrNotAllowed: Post or SetTyping was asked to write to a chat that
	// never wrote to the bot (nothing is sent there, ever).
	ErrNotAllowed = errors.New("whatsapp: the bot writes only to chats that wrote first")
	// ErrDisconnected is wrapped by Run's error when WhatsApp ended the
	// session for good (logged out, replaced, banned, outdated client).
	ErrDisconnected = errors.New("whatsapp: disconnected for good")
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
