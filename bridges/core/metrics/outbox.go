package metrics

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/agentbridge/agentbridge/store"
)

// outboxScrapeTimeout bounds the store query of one metrics scrape.
const outboxScrapeTimeout = 5 * time.Second

// OutboxSummary reports, per bot, the final replies waiting to be posted
// (core.Core.OutboxSummary).
type OutboxSummary func(ctx context.Context) ([]store.OutboxBotSummary, error)

// NewOutboxCollector exports summary as gauges:
// agentbridge_outbox_waiting{bot} (replies waiting to be posted) and
// agentbridge_outbox_oldest_waiting_seconds{bot} (how long the oldest has
// waited, by now). A bot with nothing waiting is left out; a failing store
// query is reported to the scraper.
func NewOutboxCollector(summary OutboxSummary, now func() time.Time) prometheus.Collector {
	return &outboxCollector{
		summary: summary,
		now:     now,
		waiting: prometheus.NewDesc("agentbridge_outbox_waiting",
			"Final replies waiting to be posted (a platform outage keeps them until delivery.give_up_after).", []string{"bot"}, nil),
		oldest: prometheus.NewDesc("agentbridge_outbox_oldest_waiting_seconds",
			"How long the oldest final reply waiting to be posted has waited.", []string{"bot"}, nil),
	}
}

type outboxCollector struct {
	summary         OutboxSummary
	now             func() time.Time
	waiting, oldest *prometheus.Desc
}

// Describe implements prometheus.Collector.
func (oc *outboxCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- oc.waiting
	ch <- oc.oldest
}

// Collect implements prometheus.Collector.
func (oc *outboxCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), outboxScrapeTimeout)
	defer cancel()
	sums, err := oc.summary(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(oc.waiting, err)
		return
	}
	now := oc.now()
	for _, s := range sums {
		if s.Waiting == 0 {
			continue
		}
		ch <- prometheus.MustNewConstMetric(oc.waiting, prometheus.GaugeValue, float64(s.Waiting), s.Bot)
		ch <- prometheus.MustNewConstMetric(oc.oldest, prometheus.GaugeValue, now.Sub(s.OldestWaiting).Seconds(), s.Bot)
	}
}
