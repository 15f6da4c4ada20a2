package core

import "github.com/prometheus/client_golang/prometheus"

// limitMetrics count what the spend limits did (bridges/spend).
type limitMetrics struct {
	refusals *prometheus.CounterVec
	warnings *prometheus.CounterVec
}

func newLimitMetrics(reg prometheus.Registerer) limitMetrics {
	l := limitMetrics{
		refusals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "agentbridge_limit_refusals_total",
			Help: "Messages not sent to the agent because a spend limit was used up, by scope (per_user, total) and limit (usd_per_day, usd_per_month, turns_per_hour).",
		}, []string{"bot", "scope", "limit"}),
		warnings: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "agentbridge_limit_warnings_total",
			Help: "Warnings that a spend limit is 80% used, by scope and limit.",
		}, []string{"bot", "scope", "limit"}),
	}
	reg.MustRegister(l.refusals, l.warnings)
	return l
}

// LimitRefused counts a message refused by a spend limit (spend.Counter).
func (m *Metrics) LimitRefused(bot, scope, kind string) {
	if m != nil {
		m.limits.refusals.WithLabelValues(bot, scope, kind).Inc()
	}
}

// LimitWarned counts a spend-limit warning (spend.Counter).
func (m *Metrics) LimitWarned(bot, scope, kind string) {
	if m != nil {
		m.limits.warnings.WithLabelValues(bot, scope, kind).Inc()
	}
}
