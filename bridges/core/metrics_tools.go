package core

import "github.com/prometheus/client_golang/prometheus"

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

func (m *Metrics) toolCall(bot, tool, outcome string) {
	if m != nil {
		m.tools.calls.WithLabelValues(bot, tool, outcome).Inc()
	}
}

// ScheduleFiring counts a schedule firing's outcome (schedule.Counter).
func (m *Metrics) ScheduleFiring(bot, outcome string) {
	if m != nil {
		m.tools.schedules.WithLabelValues(bot, outcome).Inc()
	}
}
