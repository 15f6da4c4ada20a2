// Package sysfail is the error of the programs the bridge binary runs
// before its own start (the egress launcher, the MCP relay): they import
// only the standard library's lowest layer, so not fmt; this package
// imports nothing.
package sysfail

// Error is what failed, and the system's reason (nil for none).
type Error struct {
	What string
	Err  error
}

func (f Error) Error() string {
	if f.Err == nil {
		return f.What
	}
	return f.What + ": " + f.Err.Error()
}

// Unwrap returns the system's reason.
func (f Error) Unwrap() error { return f.Err }
