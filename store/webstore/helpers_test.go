package webstore

import (
	"os"
	"testing"

	"github.com/agentbridge/agentbridge/store/internal/storetest"
)

// kit runs every test on SQLite and PostgreSQL, each on a fresh Store
// (storetest).
var kit = storetest.Kit[*Store]{New: New}

func TestMain(m *testing.M) { os.Exit(kit.Run(m)) }
