package slack

import (
	"context"
	"sync"
	"time"

	"github.com/agentbridge/agentbridge/bridges/internal/lru"
)

// userCache maps user ids to display names, for at most cap users (the
// least recently used are forgotten). Lookups that fail are cached for a
// shorter time (the id stands in for the name).
type userCache struct {
	ttl     time.Duration
	entries *lru.Cache[string, userEntry]
}

type userEntry struct {
	name    string
	expires time.Time
}

func newUserCache(cap int, ttl time.Duration) *userCache {
	return &userCache{ttl: ttl, entries: lru.New[string, userEntry](cap)}
}

// Name returns the cached name of id, or calls lookup (bounded by a short
// timeout) and caches its answer. It never fails: the id is the fallback.
func (c *userCache) Name(ctx context.Context, id string, lookup func(context.Context, string) (string, error)) string {
	if id == "" {
		return ""
	}
	now := time.Now()
	if e, ok := c.entries.Get(id); ok && now.Before(e.expires) {
		return e.name
	}
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	name, err := lookup(ctx, id)
	ttl := c.ttl
	if err != nil || name == "" {
		name, ttl = id, c.ttl/12
	}
	c.entries.Add(id, userEntry{name: name, expires: now.Add(ttl)})
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
