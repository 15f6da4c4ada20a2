package app

import (
	"context"
	"time"

	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/store"
)

// runPruner runs the retention pass (store.Pruner, made by pruner for a
// retention) with the retention in force, until ctx ends. When changed
// fires (a reload changed retention), the pass stops and starts again
// with the new retention, pruning at once what it no longer keeps.
func runPruner(ctx context.Context, live *config.Live, changed <-chan struct{}, pruner func(time.Duration) store.Pruner) {
	for {
		pctx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() {
			defer close(done)
			pruner(live.Current().Retention).Run(pctx)
		}()
		select {
		case <-ctx.Done():
		case <-changed:
		}
		cancel()
		<-done
		if ctx.Err() != nil {
			return
		}
	}
}
