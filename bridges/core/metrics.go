package core

import (
	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the core's Prometheus metrics. A nil *Metrics records nothing,
// so the core works without them (tests, embedding).
type Metrics struct {
	bounds      boundMetrics
	limits      limitMetrics
	tools       toolMetrics
	agentLimits agentLimitMetrics // agentlimits.go
	messages    *prometheus.CounterVec
	turns       *prometheus.CounterVec
	cost        *prometheus.CounterVec
	approvals   *prometheus.CounterVec
	exits       *prometheus.CounterVec
	outbox      *prometheus.CounterVec
	outboxGone  *prometheus.CounterVec // replies given up (outbox.go)
	strangers   *prometheus.CounterVec
	feedbacks   *prometheus.CounterVec // ratings of answers (planfeedback.go)
}

// NewMetrics creates the core's metrics and registers them with reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		bounds:      newBoundMetrics(reg),
		limits:      newLimitMetrics(reg),
		tools:       newToolMetrics(reg),
		agentLimits: newAgentLimitMetrics(reg),
		messages: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "agentbridge_messages_total",
			Help: "Inbound chat messages by outcome (accepted, duplicate, refused, ignored; adapters: undecryptable).",
		}, []string{"bot", "outcome"}),
		turns: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "agentbridge_agent_results_total",
			Help: "Agent turn results by outcome (ok, error).",
		}, []string{"bot", "outcome"}),
		cost: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "agentbridge_agent_cost_usd_total",
			Help: "Agent cost in US dollars as reported by the CLI.",
		}, []string{"bot"}),
		approvals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "agentbridge_approvals_total",
			Help: "Permission decisions by decision (allow, always, deny, timeout, rule-allow, ...).",
		}, []string{"bot", "decision"}),
		exits: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "agentbridge_agent_exits_total",
			Help: "Agent process exits by reason (closed, idle, evicted, crashed, exited).",
		}, []string{"bot", "reason"}),
		outbox: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "agentbridge_outbox_post_failures_total",
			Help: "Failed attempts to post a final reply (transient ones are retried until delivery.give_up_after).",
		}, []string{"bot"}),
		outboxGone: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "agentbridge_outbox_failed_total",
			Help: "Final replies given up, by reason: permanent (the platform refused them for good) or expired (still refused after delivery.give_up_after).",
		}, []string{"bot", "reason"}),
		strangers: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "agentbridge_stranger_notices_total",
			Help: "Notices due to users refused by access control (at most one an hour per bot and user) by how they went: ephemeral (a private notice), none (the platform has no private notice: silence), failed.",
		}, []string{"bot", "how"}),
	}
	m.feedbacks = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "agentbridge_feedback_total",
		Help: "Ratings of streamed answers by their feedback buttons (good, bad); a changed rating counts again.",
	}, []string{"bot", "rating"})
	reg.MustRegister(m.messages, m.turns, m.cost, m.approvals, m.exits, m.outbox, m.outboxGone, m.strangers, m.feedbacks)
	return m
}

func (m *Metrics) message(bot, outcome string) {
	if m != nil {
		m.messages.WithLabelValues(bot, outcome).Inc()
	}
}

// boundMetrics count what bounded memory made the bridge drop.
type boundMetrics struct {
	evictions     *prometheus.CounterVec
	eventsDropped *prometheus.CounterVec
	overflows     *prometheus.CounterVec
}

func newBoundMetrics(reg prometheus.Registerer) boundMetrics {
	b := boundMetrics{
		evictions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "agentbridge_memory_evictions_total",
			Help: "Entries the core forgot to keep its memory bounded, by what: refusals (who was told they may not talk), turn_activity (old lines of a long turn's live message), turn_tools (old tool calls of a long turn).",
		}, []string{"what"}),
		eventsDropped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "agentbridge_agent_events_dropped_total",
			Help: "Agent progress events (thinking and tool-input deltas, progress reports) dropped because the core fell behind the agent's output.",
		}, []string{"bot"}),
		overflows: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "agentbridge_agent_event_overflows_total",
			Help: "Agent processes stopped because the core fell too far behind their output (their event queue overflowed).",
		}, []string{"bot"}),
	}
	reg.MustRegister(b.evictions, b.eventsDropped, b.overflows)
	return b
}

func (m *Metrics) evicted(what string, n int) {
	if m != nil && n > 0 {
		m.bounds.evictions.WithLabelValues(what).Add(float64(n))
	}
}

func (m *Metrics) agentEventsDropped(bot string, n int, overflow bool) {
	if m == nil {
		return
	}
	if n > 0 {
		m.bounds.eventsDropped.WithLabelValues(bot).Add(float64(n))
	}
	if overflow {
		m.bounds.overflows.WithLabelValues(bot).Inc()
	}
}

func (m *Metrics) result(bot string, isError bool, costUSD float64) {
	if m == nil {
		return
	}
	outcome := "ok"
	if isError {
		outcome = "error"
	}
	m.turns.WithLabelValues(bot, outcome).Inc()
	if costUSD > 0 {
		m.cost.WithLabelValues(bot).Add(costUSD)
	}
}

func (m *Metrics) approval(bot, decision string) {
	if m != nil {
		m.approvals.WithLabelValues(bot, decision).Inc()
	}
}

func (m *Metrics) feedback(bot, rating string) {
	if m != nil {
		m.feedbacks.WithLabelValues(bot, rating).Inc()
	}
}

func (m *Metrics) exit(bot, reason string) {
	if m != nil {
		m.exits.WithLabelValues(bot, reason).Inc()
	}
}

func (m *Metrics) outboxFailure(bot string) {
	if m != nil {
		m.outbox.WithLabelValues(bot).Inc()
	}
}

func (m *Metrics) outboxGivenUp(bot, reason string) {
	if m != nil {
		m.outboxGone.WithLabelValues(bot, reason).Inc()
	}
}

func (m *Metrics) strangerNotice(bot, how string) {
	if m != nil {
		m.strangers.WithLabelValues(bot, how).Inc()
	}
}
