package discord

import "testing"

func TestLRU(t *testing.T) {
	t.Parallel()
	c := newLRU[string, int](2)
	if c.Add("a", 1) || c.Add("b", 2) {
		t.Fatal("new keys reported as present")
	}
	if _, ok := c.Get("a"); !ok { // a is now the most recent
		t.Fatal("a missing")
	}
	c.Add("c", 3) // evicts b, the least recently used
	if _, ok := c.Get("b"); ok {
		t.Error("b not evicted")
	}
	if v, ok := c.Get("a"); !ok || v != 1 {
		t.Errorf("a = %d, %v", v, ok)
	}
	if !c.Add("c", 4) {
		t.Error("existing key reported as new")
	}
	if v, _ := c.Get("c"); v != 4 || c.Len() != 2 {
		t.Errorf("c = %d, len %d", v, c.Len())
	}
	c.Remove("c")
	if _, ok := c.Get("c"); ok || c.Len() != 1 {
		t.Error("Remove did not forget c")
	}
}
