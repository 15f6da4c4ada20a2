package access

import (
	"context"
	"sync"
	"time"
)

// signal is a broadcast: wait returns a channel that fire closes.
type signal struct {
	mu sync.Mutex
	ch chan struct{}
}

func newSignal() *signal { return &signal{ch: make(chan struct{})} }

func (s *signal) wait() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ch
}

func (s *signal) fire() {
	s.mu.Lock()
	defer s.mu.Unlock()
	close(s.ch)
	s.ch = make(chan struct{})
}

// RecheckEvery is how often an open stream asks again without a signal:
// the safety net for changes made elsewhere (another replica, a config
// reload not yet signalled). With it a revocation reaches every open
// stream within a second.
const RecheckEvery = 400 * time.Millisecond

// Watch returns a channel closed once p may no longer act on c (or ctx
// ends): it asks again at each Changed and every RecheckEvery. A store
// error counts as no longer allowed (fails closed). The caller ends its
// stream with an "access ended" event when the channel closes and ctx
// has not ended.
func (a *Authority) Watch(ctx context.Context, p Person, c Conv, act Action) <-chan struct{} {
	return a.watch(ctx, func() bool { return a.May(ctx, p, c, act) })
}

// WatchValid is Watch for a stream that belongs to no conversation (a
// page's conversation list): closed once p's credential no longer holds.
func (a *Authority) WatchValid(ctx context.Context, p Person) <-chan struct{} {
	return a.watch(ctx, func() bool { return p.Valid == nil || p.Valid(ctx) })
}

// watch asks holds at once, on every Changes signal and every
// RecheckEvery, and closes the returned channel once it is false or ctx
// has ended; its goroutine ends then too.
func (a *Authority) watch(ctx context.Context, holds func() bool) <-chan struct{} {
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		tick := time.NewTicker(RecheckEvery)
		defer tick.Stop()
		for {
			changed := a.Changes()
			if !holds() {
				return
			}
			select {
			case <-ctx.Done():
				return
			case <-changed:
			case <-tick.C:
			}
		}
	}()
	return ended
}
