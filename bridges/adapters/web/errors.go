package web

import "errors"

// ErrTooLarge: FetchFile refused an upload larger than the core's limit.
var ErrTooLarge = errors.New("web upload is larger than the allowed size")
