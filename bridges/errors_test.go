package bridges_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/agentbridge/agentbridge/bridges"
)

func TestPermanentErrors(t *testing.T) {
	base := errors.New("channel_not_found")
	p := bridges.Permanent(base)
	if !bridges.IsPermanent(p) || !bridges.IsPermanent(fmt.Errorf("post reply: %w", p)) {
		t.Fatalf("IsPermanent(%v) = false, want true (also wrapped)", p)
	}
	if !errors.Is(p, base) || p.Error() != base.Error() {
		t.Fatalf("Permanent(%v) lost the wrapped error: %v", base, p)
	}
	if bridges.IsPermanent(base) || bridges.IsPermanent(nil) || bridges.Permanent(nil) != nil {
		t.Fatal("an unmarked error or nil counts as permanent")
	}
}
