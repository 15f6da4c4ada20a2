package store

import (
	"context"
	"log/slog"
	"time"
)

// DefaultPruneEvery is how often Pruner.Run prunes after its first run.
const DefaultPruneEvery = time.Hour

// Pruner applies a retention period in the background: Run prunes once at
// once and then every Every, deleting with Store.Prune what finished more
// than Retention ago. Set the fields, then call Run in its own goroutine.
type Pruner struct {
	Store     *Store        // required
	Retention time.Duration // keep this long; 0 or less = keep forever (Run returns at once)
	Every     time.Duration // default DefaultPruneEvery
	Logger    *slog.Logger  // default discards
	// Now is the clock that sets the cutoff (Now() - Retention); default
	// time.Now.
	Now func() time.Time
	// Also, if set, runs after each prune with the same cutoff, for
	// retention outside the database (e.g. agent session state on disk).
	// Its error is logged like a failed prune.
	Also func(ctx context.Context, before time.Time) error
}

// Run prunes now and then every p.Every until ctx ends. Each run that
// deleted something is logged at info level with the counts per table; a
// failed run is logged as a warning and retried at the next tick (what an
// interrupted run committed stays deleted). Run returns when ctx ends, or
// at once when Retention is not positive.
func (p Pruner) Run(ctx context.Context) {
	log := p.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if p.Retention <= 0 {
		log.Info("retention off: nothing is pruned")
		return
	}
	every := p.Every
	if every <= 0 {
		every = DefaultPruneEvery
	}
	now := p.Now
	if now == nil {
		now = time.Now
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		p.once(ctx, log, now())
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// once runs one prune with the cutoff now - Retention and logs its outcome.
func (p Pruner) once(ctx context.Context, log *slog.Logger, now time.Time) {
	before := now.Add(-p.Retention)
	start := time.Now()
	counts, err := p.Store.Prune(ctx, before)
	took := time.Since(start)
	switch {
	case err != nil && ctx.Err() != nil:
		log.Debug("prune interrupted by shutdown", "deleted", counts, "err", err)
	case err != nil:
		log.Warn("prune failed; retrying at the next run", "before", before, "deleted", counts, "took", took, "err", err)
	case counts.Total() > 0:
		log.Info("pruned rows older than the retention period", "retention", p.Retention, "before", before,
			"deleted", counts, "took", took)
	default:
		log.Debug("prune: nothing older than the retention period", "retention", p.Retention, "before", before)
	}
	if p.Also != nil && ctx.Err() == nil {
		if err := p.Also(ctx, before); err != nil && ctx.Err() == nil {
			log.Warn("prune outside the database failed; retrying at the next run", "before", before, "err", err)
		}
	}
}
