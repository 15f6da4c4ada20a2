package storecmd

import (
	"strings"
	"testing"

	"github.com/agentbridge/agentbridge/cmd/bridge/internal/cli"
	"github.com/agentbridge/agentbridge/store"
)

// TestParseStoreLocation: -from and -to take sqlite://PATH or a
// postgres:// URL, anything else is a usage error, and a location shows
// without its password.
func TestParseStoreLocation(t *testing.T) {
	tests := []struct {
		in, driver, where, shown string
	}{
		{"sqlite://data/bridge.db", store.DriverSQLite, "data/bridge.db", "sqlite://data/bridge.db"},
		{"postgres://bridge:s3cret@db:5432/bridge", store.DriverPostgres, "postgres://bridge:s3cret@db:5432/bridge", "postgres://bridge:xxxxx@db:5432/bridge"},
		{"postgresql://bridge@db/bridge", store.DriverPostgres, "postgresql://bridge@db/bridge", "postgresql://bridge@db/bridge"},
	}
	for _, tc := range tests {
		l, err := parseStoreLocation("from", tc.in)
		if err != nil || l.driver != tc.driver || l.where != tc.where || l.String() != tc.shown {
			t.Errorf("%s: %+v (shown %s), %v; want %s %s shown %s", tc.in, l, l.String(), err, tc.driver, tc.where, tc.shown)
		}
	}
	for _, in := range []string{"sqlite://", "data/bridge.db", "mysql://db/bridge"} {
		_, err := parseStoreLocation("to", in)
		if !cli.IsUsage(err) || !strings.HasPrefix(err.Error(), "-to: ") {
			t.Errorf("%s: %v, want a usage error about -to", in, err)
		}
	}
}
