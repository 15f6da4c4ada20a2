package schedule

import (
	"context"
	"log/slog"
	"time"

	"github.com/agentbridge/agentbridge/bridges/core"
	"github.com/agentbridge/agentbridge/store"
)

// StartRun lets the package's external tests start a run of sc directly.
func (s *Scheduler) StartRun(ctx context.Context, runs core.ScheduleRuns, sc store.Schedule, due time.Time, log *slog.Logger) (string, error) {
	return s.startRun(ctx, runs, sc, due, log)
}

// Fire lets the package's external tests fire sc at due (not missed).
func (s *Scheduler) Fire(ctx context.Context, runs core.ScheduleRuns, sc store.Schedule, due time.Time, log *slog.Logger) error {
	return s.fire(ctx, runs, sc, due, false, log)
}
