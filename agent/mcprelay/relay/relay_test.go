package relay

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestLightImports: the relay imports no package that Go initializes
// late (net, fmt, encoding/json, log/slog, path/filepath, …): run from
// its init, it then starts before the bridge's heavy dependencies do
// (23 package inits instead of some 190, as the launcher's). Its imports
// are the standard library's lowest layer only.
func TestLightImports(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/agentbridge/agentbridge/agent/mcprelay/relay").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	allowed := []string{"errors", "io", "io/fs", "os", "strconv", "syscall", "sync", "sync/atomic", "time", "unicode/utf8",
		"math/bits", "path", "cmp", "iter", "slices", "unsafe", "github.com/agentbridge/agentbridge/agent/mcprelay/relay",
		"github.com/agentbridge/agentbridge/internal/sysfail"}
	for _, p := range strings.Fields(string(out)) {
		if strings.HasPrefix(p, "internal/") || strings.HasPrefix(p, "runtime") || strings.HasPrefix(p, "vendor/") {
			continue
		}
		if !slices.Contains(allowed, p) {
			t.Errorf("the relay depends on %s", p)
		}
	}
}
