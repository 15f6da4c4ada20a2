package whatsapp_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests when a goroutine outlives them: the
// bridge's typing refreshes and number lookups belong to Run, which waits
// for them.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
