package discord

import (
	"container/list"
	"sync"
)

// lru is a small bounded map that forgets the least recently used entry
// when full. It is safe for concurrent use.
type lru[K comparable, V any] struct {
	mu    sync.Mutex
	max   int
	ll    *list.List // front = most recent; values are *lruEntry
	items map[K]*list.Element
}

type lruEntry[K comparable, V any] struct {
	key K
	val V
}

func newLRU[K comparable, V any](max int) *lru[K, V] {
	return &lru[K, V]{max: max, ll: list.New(), items: make(map[K]*list.Element, max)}
}

// Get returns the value for k and marks it recently used.
func (c *lru[K, V]) Get(k K) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.items[k]; ok {
		c.ll.MoveToFront(e)
		return e.Value.(*lruEntry[K, V]).val, true
	}
	var zero V
	return zero, false
}

// Add stores v for k, evicting the oldest entry when full. It reports
// whether k was already present (its value is replaced).
func (c *lru[K, V]) Add(k K, v V) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.items[k]; ok {
		e.Value.(*lruEntry[K, V]).val = v
		c.ll.MoveToFront(e)
		return true
	}
	c.items[k] = c.ll.PushFront(&lruEntry[K, V]{key: k, val: v})
	if c.ll.Len() > c.max {
		old := c.ll.Back()
		c.ll.Remove(old)
		delete(c.items, old.Value.(*lruEntry[K, V]).key)
	}
	return false
}

// Remove forgets k.
func (c *lru[K, V]) Remove(k K) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.items[k]; ok {
		c.ll.Remove(e)
		delete(c.items, k)
	}
}

// Len is the number of entries.
func (c *lru[K, V]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ll.Len()
}
