package healthz

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/agentbridge/agentbridge/store"
)

// Storage is /healthz's "storage" section: whether the database can
// be written (see store.WriteHealth).
type Storage struct {
	// State: "ok", or "full" while writes fail for want of space (or an
	// I/O error): inbound messages are then not acknowledged (platforms
	// send them again) until a write succeeds.
	State        string    `json:"state"`
	Since        time.Time `json:"since,omitzero"`          // full: since when
	Error        string    `json:"error,omitempty"`         // full: the last failed write
	FailedWrites int64     `json:"failed_writes,omitempty"` // writes refused since the bridge started
}

// addStorage adds the storage section to b. A full database makes an "ok"
// bridge "degraded" — not "failed" (HTTP 503): restarting the bridge does
// not free space, and it resumes by itself once there is some.
func (b *Body) addStorage(h store.WriteHealth) {
	s := &Storage{State: "ok", FailedWrites: h.Failures}
	if h.Full {
		s.State, s.Since, s.Error = "full", h.Since.UTC(), h.LastError
		if b.Status == "ok" {
			b.Status = "degraded"
		}
	}
	b.Storage = s
}

// RegisterStorageMetrics exports the store's write health:
// agentbridge_storage_full (1 while writes fail for want of space) and
// agentbridge_storage_write_failures_total.
func RegisterStorageMetrics(reg prometheus.Registerer, health func() store.WriteHealth) {
	reg.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "agentbridge_storage_full",
			Help: "1 while the database cannot be written (disk full): inbound messages are not acknowledged.",
		}, func() float64 {
			if health().Full {
				return 1
			}
			return 0
		}),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "agentbridge_storage_write_failures_total",
			Help: "Database writes refused for want of space (or an I/O error).",
		}, func() float64 { return float64(health().Failures) }),
	)
}
