package bridges

import "errors"

// Sentinel errors returned by the core; test with errors.Is.
var (
	// ErrUnknownBot: the message or action names a bot that is not configured
	// or has no platform.
	ErrUnknownBot = errors.New("unknown bot")
	// ErrInvalidMessage: an inbound message lacks a required field.
	ErrInvalidMessage = errors.New("invalid inbound message")
	// ErrBusy: the conversation's queue is full; the input was not queued.
	ErrBusy = errors.New("conversation busy")
	// ErrNotRunning: the core is not running (Run not called, or stopped).
	ErrNotRunning = errors.New("core not running")
)
