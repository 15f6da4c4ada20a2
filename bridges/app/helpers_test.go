package app

import (
	"fmt"
	"os"
	"testing"

	"github.com/agentbridge/agentbridge/store/pgtest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	if err := sharedPG.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	os.Exit(code)
}

// sharedPG is the test process's PostgreSQL server, started by the first
// test that needs one and stopped by TestMain.
var sharedPG pgtest.Shared
