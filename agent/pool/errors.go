package pool

import "errors"

// ErrClosed: the pool was closed; no more sessions are handed out. Test
// with errors.Is.
var ErrClosed = errors.New("agent: pool closed")
