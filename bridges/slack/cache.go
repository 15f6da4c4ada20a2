package slack

import (
	"context"
	"sync"
	"time"
)

// seenSet remembers the last cap keys added (FIFO eviction).
type seenSet struct {
	mu    sync.Mutex
	cap   int
	order []string
	set   map[string]struct{}
}

func newSeenSet(cap int) *seenSet {
	return &seenSet{cap: cap, set: make(map[string]struct{}, cap)}
}

func (s *seenSet) Has(k string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.set[k]
	return ok
}

func (s *seenSet) Add(k string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.set[k]; ok {
		return
	}
	s.set[k] = struct{}{}
	s.order = append(s.order, k)
	if len(s.order) > s.cap {
		delete(s.set, s.order[0])
		s.order = s.order[1:]
	}
}

// boundedMap is a string map that forgets its oldest keys beyond cap.
type boundedMap struct {
	mu    sync.Mutex
	cap   int
	order []string
	m     map[string]string
}

func newBoundedMap(cap int) *boundedMap {
	return &boundedMap{cap: cap, m: make(map[string]string)}
}

func (b *boundedMap) Get(k string) (string, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	v, ok := b.m[k]
	return v, ok
}

func (b *boundedMap) Set(k, v string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.m[k]; !ok {
		b.order = append(b.order, k)
		if len(b.order) > b.cap {
			delete(b.m, b.order[0])
			b.order = b.order[1:]
		}
	}
	b.m[k] = v
}

// userCache maps user ids to display names. Lookups that fail are cached
// for a shorter time (the id stands in for the name).
type userCache struct {
	mu      sync.Mutex
	cap     int
	ttl     time.Duration
	entries map[string]userEntry
}

type userEntry struct {
	name    string
	expires time.Time
}

func newUserCache(cap int, ttl time.Duration) *userCache {
	return &userCache{cap: cap, ttl: ttl, entries: map[string]userEntry{}}
}

// Name returns the cached name of id, or calls lookup (bounded by a short
// timeout) and caches its answer. It never fails: the id is the fallback.
func (c *userCache) Name(ctx context.Context, id string, lookup func(context.Context, string) (string, error)) string {
	if id == "" {
		return ""
	}
	now := time.Now()
	c.mu.Lock()
	e, ok := c.entries[id]
	c.mu.Unlock()
	if ok && now.Before(e.expires) {
		return e.name
	}
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	name, err := lookup(ctx, id)
	ttl := c.ttl
	if err != nil || name == "" {
		name, ttl = id, c.ttl/12
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.entries) >= c.cap {
		clear(c.entries)
	}
	c.entries[id] = userEntry{name: name, expires: now.Add(ttl)}
	return name
}

// editGens numbers Edits per message so that a rate-limited Edit can
// give way to a newer one.
type editGens struct {
	mu   sync.Mutex
	next uint64            // numbers are unique across messages
	gen  map[string]uint64 // message → number of its newest Edit in flight
}

// begin registers an Edit of msg. superseded reports whether a newer Edit
// of msg started since; end must be called when the Edit is over.
func (g *editGens) begin(msg string) (superseded func() bool, end func()) {
	g.mu.Lock()
	g.next++
	mine := g.next
	g.gen[msg] = mine
	g.mu.Unlock()
	superseded = func() bool {
		g.mu.Lock()
		defer g.mu.Unlock()
		return g.gen[msg] != mine
	}
	end = func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		if g.gen[msg] == mine {
			delete(g.gen, msg)
		}
	}
	return superseded, end
}
