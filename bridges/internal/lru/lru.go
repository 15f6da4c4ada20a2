// Package lru is the bounded memory the chat adapters keep (message ids
// already handed to the core, messages sent and received, channel facts,
// user names): a map of at most a fixed number of entries that forgets the
// least recently used one when full, safe for concurrent use. It is a thin
// layer over github.com/hashicorp/golang-lru/v2 that fixes the size at
// construction and names the few operations the adapters need.
package lru

import (
	"fmt"

	hlru "github.com/hashicorp/golang-lru/v2"
)

// Cache is a size-bounded map. Its zero value is not usable: call New.
type Cache[K comparable, V any] struct {
	c *hlru.Cache[K, V]
}

// New returns an empty cache of at most size entries. size is a constant
// of the caller, so a size below 1 is a programming error and panics.
func New[K comparable, V any](size int) *Cache[K, V] {
	c, err := hlru.New[K, V](size)
	if err != nil {
		panic(fmt.Sprintf("lru.New(%d): %v", size, err))
	}
	return &Cache[K, V]{c: c}
}

// Get returns the value stored for k and marks k recently used.
func (c *Cache[K, V]) Get(k K) (V, bool) { return c.c.Get(k) }

// Contains reports whether k is stored, without marking it used.
func (c *Cache[K, V]) Contains(k K) bool { return c.c.Contains(k) }

// Add stores v for k (replacing an older value) and marks k recently
// used; when the cache is full the least recently used entry is dropped.
func (c *Cache[K, V]) Add(k K, v V) { c.c.Add(k, v) }

// ContainsOrAdd stores v for k unless k is already stored, in one step,
// and reports whether it was: the check-and-remember of a deduplicator.
// A stored value is kept as it is.
func (c *Cache[K, V]) ContainsOrAdd(k K, v V) (present bool) {
	present, _ = c.c.ContainsOrAdd(k, v)
	return present
}

// Remove forgets k.
func (c *Cache[K, V]) Remove(k K) { c.c.Remove(k) }

// Len is the number of entries, at most the size given to New.
func (c *Cache[K, V]) Len() int { return c.c.Len() }
