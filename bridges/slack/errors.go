package slack

import "errors"

// Sentinel errors of the Slack adapter.
var (
	// ErrFileTooLarge: FetchFile stopped at its size cap.
	ErrFileTooLarge = errors.New("slack: file larger than the allowed size")
	// ErrBadUpload: UploadFile was given an empty or too large file.
	ErrBadUpload = errors.New("slack: file cannot be uploaded")
	// ErrNoConfig: New was given no bot or no slack section.
	ErrNoConfig = errors.New("slack: missing slack configuration")
	// ErrFatal wraps errors that retrying cannot fix (bad or revoked
	// tokens, a missing scope): Run returns them.
	ErrFatal = errors.New("slack: fatal error")

	// errSuperseded: a rate-limited Edit gave way to a newer one.
	errSuperseded = errors.New("superseded by a newer edit")
)
