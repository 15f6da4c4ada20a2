package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/agentbridge/agentbridge/agent/pool"
)

// Counter is a pool that counts its agent processes.
type Counter interface{ Len() int }

// Spares is a pool that keeps warm spares and reports them per profile.
type Spares interface {
	SpareStatus(profile string) pool.SpareStatus
}

// poolCollector reads the agent pool at scrape time: the live agents and
// each profile's warm spares.
type poolCollector struct {
	count    Counter
	spares   Spares
	profiles []string
	live     *prometheus.Desc
	ready    *prometheus.Desc
	failures *prometheus.Desc
}

// NewPoolCollector returns a Prometheus collector of the pool's gauges:
// agentbridge_agents (agent processes the pool holds, warm spares
// included) when count is not nil, and, when spares is not nil,
// agentbridge_warm_spares{profile,state} (state ready, starting, or
// target: how many the pool wants now, which follows the arrivals of new
// conversations with warm_spares: auto) and
// agentbridge_warm_spare_failures{profile} (consecutive spares that
// failed to start or died unused: above 0 with no ready spare, the
// profile's CLI is failing) for each of profiles.
func NewPoolCollector(count Counter, spares Spares, profiles []string) prometheus.Collector {
	return &poolCollector{
		count:    count,
		spares:   spares,
		profiles: profiles,
		live: prometheus.NewDesc("agentbridge_agents",
			"Agent processes the pool holds (live, starting or stopping), warm spares included.", nil, nil),
		ready: prometheus.NewDesc("agentbridge_warm_spares",
			"Warm spares of an agent profile by state: ready (initialized, waiting for a new conversation), starting, or target (how many the pool wants now).",
			[]string{"profile", "state"}, nil),
		failures: prometheus.NewDesc("agentbridge_warm_spare_failures",
			"Consecutive warm spares of a profile that failed to start or died unused (0 when healthy).",
			[]string{"profile"}, nil),
	}
}

// Describe implements prometheus.Collector.
func (c *poolCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.live
	ch <- c.ready
	ch <- c.failures
}

// Collect implements prometheus.Collector.
func (c *poolCollector) Collect(ch chan<- prometheus.Metric) {
	if c.count != nil {
		ch <- prometheus.MustNewConstMetric(c.live, prometheus.GaugeValue, float64(c.count.Len()))
	}
	if c.spares == nil {
		return
	}
	for _, p := range c.profiles {
		st := c.spares.SpareStatus(p)
		for state, n := range map[string]int{"ready": st.Ready, "starting": st.Starting, "target": st.Want} {
			ch <- prometheus.MustNewConstMetric(c.ready, prometheus.GaugeValue, float64(n), p, state)
		}
		ch <- prometheus.MustNewConstMetric(c.failures, prometheus.GaugeValue, float64(st.Failures), p)
	}
}
