package metrics

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestEventsDroppedMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := New(reg)
	m.AgentEventsDropped("bot", 7, false)
	m.AgentEventsDropped("bot", 2, true)
	want := `
# HELP agentbridge_agent_event_overflows_total Agent processes stopped because the core fell too far behind their output (their event queue overflowed).
# TYPE agentbridge_agent_event_overflows_total counter
agentbridge_agent_event_overflows_total{bot="bot"} 1
# HELP agentbridge_agent_events_dropped_total Agent progress events (thinking and tool-input deltas, progress reports) dropped because the core fell behind the agent's output.
# TYPE agentbridge_agent_events_dropped_total counter
agentbridge_agent_events_dropped_total{bot="bot"} 9
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want),
		"agentbridge_agent_events_dropped_total", "agentbridge_agent_event_overflows_total"); err != nil {
		t.Error(err)
	}
	var nilMetrics *Metrics
	nilMetrics.AgentEventsDropped("bot", 1, true) // no metrics: no panic
	nilMetrics.Evicted("refusals", 1)
}
