package agent

import (
	"path/filepath"
	"testing"

	"github.com/agentbridge/agentbridge/bridges/core/sessiondir"
)

// TestACPStateNamesMatchSessiondir: the replicas carry an ACP session by
// the names package sessiondir gives its parts; they must be where the
// agent keeps its record and HOME, or a moved session starts fresh.
func TestACPStateNamesMatchSessiondir(t *testing.T) {
	t.Parallel()
	opts := Options{StateDir: t.TempDir(), Kind: KindACP}
	for got, want := range map[string]string{
		acpDir(opts):         filepath.Join(opts.StateDir, sessiondir.ACPDir),
		acpHome(opts):        filepath.Join(opts.StateDir, sessiondir.ACPHome),
		acpSessionFile(opts): filepath.Join(opts.StateDir, filepath.FromSlash(sessiondir.ACPRecord)),
	} {
		if got != want {
			t.Errorf("the agent keeps %s, sessiondir names %s", got, want)
		}
	}
}
