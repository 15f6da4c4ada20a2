package core

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/agentbridge/agentbridge/bridges/metrics"
)

// Metrics are the core's Prometheus metrics (bridges/metrics). A nil
// *Metrics records nothing, so the core works without them (tests,
// embedding).
type Metrics = metrics.Metrics

// NewMetrics creates the core's metrics and registers them with reg.
func NewMetrics(reg prometheus.Registerer) *Metrics { return metrics.New(reg) }

// NewPoolCollector returns a Prometheus collector of pool's gauges (see
// metrics.NewPoolCollector): the processes when pool can count them, the
// warm spares of each of profiles when it keeps them (WarmPool).
func NewPoolCollector(pool AgentPool, profiles []string) prometheus.Collector {
	count, _ := pool.(metrics.Counter)
	var spares metrics.Spares
	if wp, ok := pool.(WarmPool); ok {
		spares = wp
	}
	return metrics.NewPoolCollector(count, spares, profiles)
}
