package storetest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/internal/testkit"
)

// Leaser acquires leases: coord's Coordinator and the store's facade.
// TakeOver is generic over the lease type because this kit cannot import
// coord, whose own tests use it.
type Leaser[L any] interface {
	AcquireLease(ctx context.Context, resource, owner string, ttl time.Duration) (L, error)
}

// takeOverTimeout bounds TakeOver.
const takeOverTimeout = 10 * time.Second

// TakeOver has s acquire resource for owner, retrying while another owner
// holds it (an error that errors.Is held): a replica taking over once the
// holder's lease has expired on the database's clock. It fails t on any
// other error, or when the lease is still held after 10 s.
func TakeOver[L any](t testing.TB, s Leaser[L], held error, resource, owner string, ttl time.Duration) L {
	t.Helper()
	var l L
	testkit.WaitUntilSeen(t, "the take-over of "+resource+" by "+owner, takeOverTimeout, func() (bool, string) {
		var err error
		l, err = s.AcquireLease(context.Background(), resource, owner, ttl)
		if err != nil && !errors.Is(err, held) {
			t.Fatalf("take over %s for %s: %v", resource, owner, err)
		}
		return err == nil, fmt.Sprint(err)
	})
	return l
}
