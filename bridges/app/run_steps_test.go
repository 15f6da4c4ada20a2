package app

import (
	"slices"
	"testing"
)

// The start-up steps add their clean-ups in the order they open things;
// Run's shutdown depends on run calling them last first, as the
// deferred calls they replace did.
func TestCleanupsRunLastFirst(t *testing.T) {
	var got []string
	var c cleanups
	for _, name := range []string{"lock", "store", "containment", "agents"} {
		c.add(func() { got = append(got, name) })
	}
	c.run()
	if want := []string{"agents", "containment", "store", "lock"}; !slices.Equal(got, want) {
		t.Fatalf("clean-ups ran %v, want %v", got, want)
	}
}

// TestCleanupsDeferredBeforeAdded: Run defers run before any step adds
// its clean-up; they must still run (a value receiver would see the empty
// list the defer statement evaluated).
func TestCleanupsDeferredBeforeAdded(t *testing.T) {
	var got []string
	func() {
		r := &bridgeRun{}
		defer r.done.run()
		r.done.add(func() { got = append(got, "store") })
		r.done.add(func() { got = append(got, "agents") })
	}()
	if want := []string{"agents", "store"}; !slices.Equal(got, want) {
		t.Fatalf("clean-ups ran %v, want %v", got, want)
	}
}
