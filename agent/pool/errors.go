package pool

import "errors"

// ErrClosed: the pool was closed; no more sessions are handed out. Test
// with errors.Is.
var ErrClosed = errors.New("agent: pool closed")

// ErrNoRoom: a warm resume found no free slot or memory for itself
// (Pool.WarmResume). Test with errors.Is.
var ErrNoRoom = errors.New("agent: no room for a warm resume")
