// Package metrics holds the core's Prometheus metrics: counters the core
// and its features update through nil-safe methods of *Metrics, and a
// collector of the agent pool's gauges read at scrape time. Metric names,
// labels and help texts are part of the operator's contract (docs/).
package metrics

import "github.com/prometheus/client_golang/prometheus"

// Metrics are the core's Prometheus metrics. A nil *Metrics records nothing,
// so the core works without them (tests, embedding).
type Metrics struct {
	bounds      boundMetrics
	limits      limitMetrics
	tools       toolMetrics
	agentLimits agentLimitMetrics
	messages    *prometheus.CounterVec
	turns       *prometheus.CounterVec
	cost        *prometheus.CounterVec
	approvals   *prometheus.CounterVec
	exits       *prometheus.CounterVec
	outbox      *prometheus.CounterVec
	outboxGone  *prometheus.CounterVec // replies given up
	strangers   *prometheus.CounterVec
	feedbacks   *prometheus.CounterVec // ratings of answers (core/planfeedback.go)
}

// New creates the core's metrics and registers them with reg.
func New(reg prometheus.Registerer) *Metrics {
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

// Message counts an inbound chat message by outcome.
func (m *Metrics) Message(bot, outcome string) {
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

// Evicted counts n entries the core forgot to keep its memory bounded.
func (m *Metrics) Evicted(what string, n int) {
	if m != nil && n > 0 {
		m.bounds.evictions.WithLabelValues(what).Add(float64(n))
	}
}

// AgentEventsDropped counts n agent events dropped, and an overflow that
// stopped the agent.
func (m *Metrics) AgentEventsDropped(bot string, n int, overflow bool) {
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

// Result counts a turn's result and adds its cost.
func (m *Metrics) Result(bot string, isError bool, costUSD float64) {
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

// Approval counts a permission decision.
func (m *Metrics) Approval(bot, decision string) {
	if m != nil {
		m.approvals.WithLabelValues(bot, decision).Inc()
	}
}

// Feedback counts a 👍/👎 rating of an answer.
func (m *Metrics) Feedback(bot, rating string) {
	if m != nil {
		m.feedbacks.WithLabelValues(bot, rating).Inc()
	}
}

// Exit counts an agent process exit by reason.
func (m *Metrics) Exit(bot, reason string) {
	if m != nil {
		m.exits.WithLabelValues(bot, reason).Inc()
	}
}

// OutboxFailure counts a failed attempt to post a final reply.
func (m *Metrics) OutboxFailure(bot string) {
	if m != nil {
		m.outbox.WithLabelValues(bot).Inc()
	}
}

// OutboxGivenUp counts a final reply given up, by reason.
func (m *Metrics) OutboxGivenUp(bot, reason string) {
	if m != nil {
		m.outboxGone.WithLabelValues(bot, reason).Inc()
	}
}

// StrangerNotice counts a notice due to a refused user, by how it went.
func (m *Metrics) StrangerNotice(bot, how string) {
	if m != nil {
		m.strangers.WithLabelValues(bot, how).Inc()
	}
}
