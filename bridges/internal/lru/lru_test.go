package lru

import (
	"fmt"
	"sync"
	"testing"
)

func TestEvictsLeastRecentlyUsed(t *testing.T) {
	t.Parallel()
	c := New[string, int](2)
	c.Add("a", 1)
	c.Add("b", 2)
	if _, ok := c.Get("a"); !ok { // a is now the most recent
		t.Fatal("a missing")
	}
	c.Add("c", 3) // evicts b, the least recently used
	if c.Contains("b") {
		t.Error("b not evicted")
	}
	if v, ok := c.Get("a"); !ok || v != 1 {
		t.Errorf("a = %d, %v; want 1, true", v, ok)
	}
	c.Add("c", 4)
	if v, _ := c.Get("c"); v != 4 || c.Len() != 2 {
		t.Errorf("c = %d, len %d; want 4, 2", v, c.Len())
	}
	c.Remove("c")
	if c.Contains("c") || c.Len() != 1 {
		t.Error("Remove did not forget c")
	}
}

func TestContainsDoesNotRefresh(t *testing.T) {
	t.Parallel()
	c := New[string, bool](2)
	c.Add("a", true)
	c.Add("b", true)
	if !c.Contains("a") {
		t.Fatal("a missing")
	}
	c.Add("c", true) // a is still the least recently used
	if c.Contains("a") {
		t.Error("Contains marked a as used")
	}
}

func TestContainsOrAdd(t *testing.T) {
	t.Parallel()
	c := New[string, int](4)
	if c.ContainsOrAdd("a", 1) {
		t.Error("new key reported as present")
	}
	if !c.ContainsOrAdd("a", 2) {
		t.Error("stored key reported as new")
	}
	if v, _ := c.Get("a"); v != 1 {
		t.Errorf("a = %d; ContainsOrAdd replaced the stored value", v)
	}
}

// TestContainsOrAddOnce checks that of many goroutines remembering the
// same keys, exactly one sees each key as new.
func TestContainsOrAddOnce(t *testing.T) {
	t.Parallel()
	const keys, workers = 100, 8
	c := New[string, struct{}](keys)
	var mu sync.Mutex
	firsts := map[string]int{}
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := range keys {
				k := fmt.Sprint(i)
				if !c.ContainsOrAdd(k, struct{}{}) {
					mu.Lock()
					firsts[k]++
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	for i := range keys {
		if n := firsts[fmt.Sprint(i)]; n != 1 {
			t.Errorf("key %d seen as new %d times, want 1", i, n)
		}
	}
}

func TestBounded(t *testing.T) {
	t.Parallel()
	for _, size := range []int{1, 3, 100} {
		c := New[int, int](size)
		for i := range 3 * size {
			c.Add(i, i)
			if c.Len() > size {
				t.Fatalf("size %d: Len %d after %d adds", size, c.Len(), i+1)
			}
		}
		for i := 2 * size; i < 3*size; i++ {
			if !c.Contains(i) {
				t.Errorf("size %d: newest key %d was dropped", size, i)
			}
		}
	}
}

func TestNewPanicsOnBadSize(t *testing.T) {
	t.Parallel()
	for _, size := range []int{0, -1} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("New(%d) did not panic", size)
				}
			}()
			New[string, int](size)
		}()
	}
}
