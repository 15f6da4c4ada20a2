package metrics

import "github.com/prometheus/client_golang/prometheus"

// limitMetrics count what the spend limits did (bridges/features/spend).
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

// toolMetrics count the agent's calls of the bridge's own tools and the
// firings of schedules.
type toolMetrics struct {
	calls     *prometheus.CounterVec
	schedules *prometheus.CounterVec
}

func newToolMetrics(reg prometheus.Registerer) toolMetrics {
	t := toolMetrics{
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "agentbridge_agent_tool_calls_total",
			Help: "Calls of the bridge's own agent tools (send_message, send_file, schedule, list_schedules, cancel_schedule) by outcome (ok, error).",
		}, []string{"bot", "tool", "outcome"}),
		schedules: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "agentbridge_schedule_firings_total",
			Help: "Schedule firings by outcome: ran, caught_up (a run missed while the bridge was down, run at start), skipped_overlap (the previous run had not finished), skipped_missed (missed while down, catch_up off), failed.",
		}, []string{"bot", "outcome"}),
	}
	reg.MustRegister(t.calls, t.schedules)
	return t
}

// ToolCall counts a call of one of the bridge's agent tools.
func (m *Metrics) ToolCall(bot, tool, outcome string) {
	if m != nil {
		m.tools.calls.WithLabelValues(bot, tool, outcome).Inc()
	}
}

// ScheduleFiring counts a schedule firing's outcome (the Counter of
// bridges/features/schedule).
func (m *Metrics) ScheduleFiring(bot, outcome string) {
	if m != nil {
		m.tools.schedules.WithLabelValues(bot, outcome).Inc()
	}
}

// agentLimitMetrics count agents' hits of their resource limits.
type agentLimitMetrics struct {
	hits *prometheus.CounterVec
}

func newAgentLimitMetrics(reg prometheus.Registerer) agentLimitMetrics {
	m := agentLimitMetrics{
		hits: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "agentbridge_agent_limit_hits_total",
			Help: "Hits of an agent's resource limits by profile and limit: memory (processes killed by the memory cap), processes (forks and threads refused by the process cap).",
		}, []string{"profile", "limit"}),
	}
	reg.MustRegister(m.hits)
	return m
}

// LimitHit counts n hits of an agent's resource limit.
func (m *Metrics) LimitHit(profile, limit string, n int64) {
	if m != nil && n > 0 {
		m.agentLimits.hits.WithLabelValues(profile, limit).Add(float64(n))
	}
}
