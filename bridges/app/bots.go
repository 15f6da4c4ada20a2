package app

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/config"
)

// botSet owns the bots' platform adapters (but the web console's): it
// opens them at start and when a reload adds or restarts a bot, and
// releases what each holds (WhatsApp device stores) once it has stopped.
// Safe for concurrent use.
type botSet struct {
	logger *slog.Logger

	mu      sync.Mutex
	release map[bridges.Platform]func() // adapters not yet released
	// gate makes the connection lease of a bot whose platform allows one
	// connection (replicas, connleases.go); nil: adapters connect at once.
	gate func(*config.Bot) (bridges.ConnGate, error)
}

// buildPlatforms creates one adapter per configured bot (but the web bot,
// made with the web console). The returned botSet releases them (close)
// once they have stopped.
func buildPlatforms(ctx context.Context, cfg *config.Config, logger *slog.Logger) (map[string]bridges.Platform, *botSet, error) {
	bs := &botSet{logger: logger, release: make(map[bridges.Platform]func())}
	out, err := bs.open(ctx, cfg, cfg.Bots)
	if err != nil {
		return nil, nil, err
	}
	return out, bs, nil
}

// open opens the adapters of bots (of cfg), skipping the web bot; when
// one fails, those opened are released and the error names the bot.
func (bs *botSet) open(ctx context.Context, cfg *config.Config, bots []*config.Bot) (map[string]bridges.Platform, error) {
	out := make(map[string]bridges.Platform, len(bots))
	list := platforms()
	for _, b := range bots {
		i := slices.IndexFunc(list, func(p platform) bool { return p.config.Name == b.Platform })
		if i >= 0 && list[i].open == nil {
			continue // the web console, made once the store is open (web.go)
		}
		p, release, err := openBot(ctx, list, i, cfg, b, bs.logger)
		if err == nil {
			bs.mu.Lock()
			gate := bs.gate
			bs.mu.Unlock()
			if err = setGate(p, b, gate); err != nil {
				_ = release()
			}
		}
		if err != nil {
			for _, q := range out {
				bs.released("", q)
			}
			return nil, fmt.Errorf("bot %q: %w", b.Name, err)
		}
		bs.mu.Lock()
		bs.release[p] = func() {
			if err := release(); err != nil {
				bs.logger.Warn("close platform adapter", "bot", b.Name, "platform", b.Platform, "err", err)
			}
		}
		bs.mu.Unlock()
		out[b.Name] = p
	}
	return out, nil
}

// released releases the adapter p once it has stopped (reload.Reload's
// Stopped); bot names it in logs only.
func (bs *botSet) released(_ string, p bridges.Platform) {
	bs.mu.Lock()
	f := bs.release[p]
	delete(bs.release, p)
	bs.mu.Unlock()
	if f != nil {
		f()
	}
}

// close releases every adapter left; call it once they have stopped.
func (bs *botSet) close() {
	bs.mu.Lock()
	fs := make([]func(), 0, len(bs.release))
	for p, f := range bs.release {
		fs = append(fs, f)
		delete(bs.release, p)
	}
	bs.mu.Unlock()
	for _, f := range fs {
		f()
	}
}
