package whatsapp

import "errors"

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
