// Package tasks gives background goroutines an owner: a Group runs them
// and its owner waits for them (in the spirit of tailscale's
// util/execqueue: a goroutine exists only while there is work, and
// someone waits for it).
package tasks

import "sync"

// Group runs goroutines for its owner. The zero value is ready to use;
// Close stops it taking new ones and waits for those running. Safe for
// concurrent use.
type Group struct {
	mu     sync.Mutex
	closed bool
	wg     sync.WaitGroup
}

// Go runs f in a goroutine of g and reports true, or reports false and
// does not run f when g is closed.
func (g *Group) Go(f func()) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return false
	}
	g.wg.Go(f)
	return true
}

// Open lets a closed g take goroutines again (an owner that runs more
// than once, like a platform's Run).
func (g *Group) Open() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.closed = false
}

// Close makes Go refuse new goroutines and waits until those running have
// returned.
func (g *Group) Close() {
	g.mu.Lock()
	g.closed = true
	g.mu.Unlock()
	g.wg.Wait()
}
