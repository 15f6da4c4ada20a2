package core

import "github.com/prometheus/client_golang/prometheus"

// poolCollector reads the agent pool at scrape time: the live agents and
// each profile's warm spares.
type poolCollector struct {
	pool     AgentPool
	profiles []string
	live     *prometheus.Desc
	spares   *prometheus.Desc
	failures *prometheus.Desc
}

// NewPoolCollector returns a Prometheus collector of pool's gauges:
// agentbridge_agents (agent processes the pool holds, warm spares
// included) when pool can count them, and, when it keeps warm spares,
// agentbridge_warm_spares{profile,state} (state ready or starting) and
// agentbridge_warm_spare_failures{profile} (consecutive spares that
// failed to start or died unused: above 0 with no ready spare, the
// profile's CLI is failing) for each of profiles.
func NewPoolCollector(pool AgentPool, profiles []string) prometheus.Collector {
	return &poolCollector{
		pool:     pool,
		profiles: profiles,
		live: prometheus.NewDesc("agentbridge_agents",
			"Agent processes the pool holds (live, starting or stopping), warm spares included.", nil, nil),
		spares: prometheus.NewDesc("agentbridge_warm_spares",
			"Warm spares of an agent profile by state: ready (initialized, waiting for a new conversation) or starting.",
			[]string{"profile", "state"}, nil),
		failures: prometheus.NewDesc("agentbridge_warm_spare_failures",
			"Consecutive warm spares of a profile that failed to start or died unused (0 when healthy).",
			[]string{"profile"}, nil),
	}
}

// Describe implements prometheus.Collector.
func (c *poolCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.live
	ch <- c.spares
	ch <- c.failures
}

// Collect implements prometheus.Collector.
func (c *poolCollector) Collect(ch chan<- prometheus.Metric) {
	if n, ok := c.pool.(interface{ Len() int }); ok {
		ch <- prometheus.MustNewConstMetric(c.live, prometheus.GaugeValue, float64(n.Len()))
	}
	wp, ok := c.pool.(WarmPool)
	if !ok {
		return
	}
	for _, p := range c.profiles {
		st := wp.SpareStatus(p)
		for state, n := range map[string]int{"ready": st.Ready, "starting": st.Starting} {
			ch <- prometheus.MustNewConstMetric(c.spares, prometheus.GaugeValue, float64(n), p, state)
		}
		ch <- prometheus.MustNewConstMetric(c.failures, prometheus.GaugeValue, float64(st.Failures), p)
	}
}
