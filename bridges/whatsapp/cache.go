package whatsapp

import "sync"

// boundedMap is a map that forgets its oldest entries beyond a size: the
// adapter's memory of seen, sent and received messages. Safe for
// concurrent use.
type boundedMap[K comparable, V any] struct {
	mu    sync.Mutex
	max   int
	m     map[K]V
	order []K
}

func newBoundedMap[K comparable, V any](max int) *boundedMap[K, V] {
	return &boundedMap[K, V]{max: max, m: make(map[K]V)}
}

// Put stores v at k (a new key counts as the newest).
func (c *boundedMap[K, V]) Put(k K, v V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.m[k]; !ok {
		c.order = append(c.order, k)
	}
	c.m[k] = v
	for len(c.order) > c.max {
		delete(c.m, c.order[0])
		c.order = c.order[1:]
	}
}

// Get returns the value at k.
func (c *boundedMap[K, V]) Get(k K) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[k]
	return v, ok
}
