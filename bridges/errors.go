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
	// ErrStorageFull: the message was not recorded because the bridge's
	// database cannot be written (a full disk). HandleMessage returns it
	// wrapped; the adapter must not acknowledge the message (the platform
	// sends it again, and it is accepted once space returns) and need not
	// log each one: the store logs the condition once a minute.
	ErrStorageFull = errors.New("storage full: message not recorded")
)

// ErrPermanent marks a platform error that no retry can fix: the channel or
// thread is gone, the bot was removed from it, the message was rejected as
// invalid. Adapters wrap such errors with Permanent; the core then reports
// the reply as failed at once instead of waiting out an outage. Any other
// error of Post, Edit or UploadFile (network errors, 5xx, 429, a platform
// that is disconnected) is transient: the core keeps the reply pending and
// tries again with back-off.
var ErrPermanent = errors.New("permanent platform error")

// Permanent wraps err so that IsPermanent reports true for it; nil stays nil.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return permanentError{err}
}

// IsPermanent reports whether err (or an error it wraps) is permanent.
func IsPermanent(err error) bool { return errors.Is(err, ErrPermanent) }

type permanentError struct{ err error }

func (e permanentError) Error() string   { return e.err.Error() }
func (e permanentError) Unwrap() []error { return []error{e.err, ErrPermanent} }
