package bridges

import (
	"context"
	"errors"
	"fmt"
	"net/http"
)

// The write guard. With replicas a conversation's worker may write to its
// platform only while its replica holds the conversation's lease. The core
// asks before each post, but a replica paused between that check and the
// request (SIGSTOP, a frozen VM, a long GC) would send the request when it
// runs again, after another replica took over. So the core also puts the
// check into the context of every platform call it makes for a
// conversation (WithWriteGuard), and an adapter asks it at the last moment
// it can: its HTTP transport, as the request leaves (GuardWrites). What
// remains is the time between that check and the bytes on the wire.

// ErrWriteGuarded: a platform request was withheld because the context's
// write guard said no (this replica no longer holds the conversation). It
// is transient for the caller; the core stops the conversation here.
var ErrWriteGuarded = errors.New("platform request withheld: this replica no longer holds the conversation")

type writeGuardKey struct{}

// WithWriteGuard returns ctx carrying allowed, which reports whether
// platform requests made with the context may still be sent. allowed must
// be safe to call from any goroutine and must not block.
func WithWriteGuard(ctx context.Context, allowed func() bool) context.Context {
	return context.WithValue(ctx, writeGuardKey{}, allowed)
}

// WriteAllowed reports whether ctx's write guard allows a platform request
// now; true when ctx carries none.
func WriteAllowed(ctx context.Context) bool {
	allowed, ok := ctx.Value(writeGuardKey{}).(func() bool)
	return !ok || allowed()
}

// GuardWrites wraps an adapter's HTTP transport: a request whose context's
// write guard says no fails with ErrWriteGuarded before it is sent.
func GuardWrites(rt http.RoundTripper) http.RoundTripper {
	return guardTransport{rt}
}

type guardTransport struct{ next http.RoundTripper }

func (g guardTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if !WriteAllowed(r.Context()) {
		if r.Body != nil {
			_ = r.Body.Close() // RoundTrip must close the body, also on error
		}
		return nil, fmt.Errorf("%s %s: %w", r.Method, r.URL.Path, ErrWriteGuarded)
	}
	return g.next.RoundTrip(r)
}
