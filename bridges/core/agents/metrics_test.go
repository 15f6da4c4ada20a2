package agents_test

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/agentbridge/agentbridge/agent/pool"
	"github.com/agentbridge/agentbridge/bridges/core/agents"
)

// TestPoolCollector: /metrics shows the pool's processes and, per profile,
// the warm spares ready, starting and wanted and the consecutive failures; a pool
// without spares or a count shows neither.
func TestPoolCollector(t *testing.T) {
	wp := &warmPool{}
	wp.setStatus(pool.SpareStatus{Want: 2, Ready: 1, Starting: 1, Failures: 3})
	c := agents.NewPoolCollector(countedPool{wp, 5}, []string{"coder"})
	want := `
# HELP agentbridge_agents Agent processes the pool holds (live, starting or stopping), warm spares included.
# TYPE agentbridge_agents gauge
agentbridge_agents 5
# HELP agentbridge_warm_spare_failures Consecutive warm spares of a profile that failed to start or died unused (0 when healthy).
# TYPE agentbridge_warm_spare_failures gauge
agentbridge_warm_spare_failures{profile="coder"} 3
# HELP agentbridge_warm_spares Warm spares of an agent profile by state: ready (initialized, waiting for a new conversation), starting, or target (how many the pool wants now).
# TYPE agentbridge_warm_spares gauge
agentbridge_warm_spares{profile="coder",state="ready"} 1
agentbridge_warm_spares{profile="coder",state="starting"} 1
agentbridge_warm_spares{profile="coder",state="target"} 2
`
	if err := testutil.CollectAndCompare(c, strings.NewReader(want)); err != nil {
		t.Error(err)
	}

	if n := testutil.CollectAndCount(agents.NewPoolCollector(plainPool{}, []string{"coder"})); n != 0 {
		t.Errorf("a pool without spares or a count reported %d metrics, want 0", n)
	}
}
