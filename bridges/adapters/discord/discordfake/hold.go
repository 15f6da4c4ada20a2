package discordfake

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
)

// heldCall is a HoldResponse waiting for its request.
type heldCall struct {
	route   string
	match   func(body string) bool
	reached chan struct{}
	release chan struct{}
}

// HoldResponse holds the answer of the next request on route (a Route*
// constant) whose body matches: the request runs as usual (a message is
// created or edited and dispatched), then its answer waits until release
// is called or the client goes away — the moment to kill a bridge inside
// the call. reached is closed when the request arrived. One request is
// held; a nil match matches any body.
func (f *Fake) HoldResponse(route string, match func(body string) bool) (reached <-chan struct{}, release func()) {
	h := &heldCall{route: route, match: match, reached: make(chan struct{}), release: make(chan struct{})}
	f.mu.Lock()
	f.holds = append(f.holds, h)
	f.mu.Unlock()
	var once sync.Once
	return h.reached, func() { once.Do(func() { close(h.release) }) }
}

// holdFor returns, and removes, the HoldResponse that holds this request
// on route, or nil; r's body stays readable.
func (f *Fake) holdFor(route string, r *http.Request) *heldCall {
	f.mu.Lock()
	n := len(f.holds)
	f.mu.Unlock()
	if n == 0 {
		return nil
	}
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, h := range f.holds {
		if h.route == route && (h.match == nil || h.match(string(body))) {
			f.holds = append(f.holds[:i], f.holds[i+1:]...)
			return h
		}
	}
	return nil
}

// serveHeld runs h for a held request, then waits for the release (or the
// client's going away) before it answers.
func serveHeld(held *heldCall, w http.ResponseWriter, r *http.Request, h http.HandlerFunc) {
	rec := httptest.NewRecorder()
	h(rec, r)
	close(held.reached)
	select {
	case <-held.release:
	case <-r.Context().Done():
		return
	}
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.Code)
	_, _ = w.Write(rec.Body.Bytes())
}
