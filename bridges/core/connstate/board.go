// Package connstate keeps the connection state of each bot as its adapter
// reports it (bridges.StateReporter) or as its Run ended (Failed): since
// when, failed as final, each change logged once (a failure with what to
// do). The core keeps one Board; /healthz, the operator view and !status
// read it.
package connstate

import (
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/config"
)

// Board is the connection state of the bots. It is safe for concurrent
// use: each adapter reports from its own goroutine.
type Board struct {
	log *slog.Logger
	now func() time.Time
	mu  sync.Mutex
	m   map[string]bridges.BotState // by bot name
}

// New is a board with no state yet, logging to log with the time from now.
func New(log *slog.Logger, now func() time.Time) *Board {
	return &Board{log: log, now: now}
}

// Set records bot's state, logging changes of state (a failure once,
// with what to do). A failed bot stays failed; a state repeated keeps the
// time it began (Since: reconnecting since the start of the outage).
func (b *Board) Set(bot string, s bridges.BotState) {
	b.mu.Lock()
	old, had := b.m[bot]
	if had && old.State == bridges.ConnFailed {
		b.mu.Unlock()
		return // failed is final: Run ends next
	}
	s.Since = b.now()
	if had && old.State == s.State {
		s.Since = old.Since
	}
	if b.m == nil {
		b.m = make(map[string]bridges.BotState)
	}
	b.m[bot] = s
	b.mu.Unlock()
	if had && old.State == s.State {
		return
	}
	log := b.log.With("bot", bot, "state", string(s.State))
	switch s.State {
	case bridges.ConnFailed:
		args := []any{"reason", s.Reason, "remedy", s.Remedy, "hint", s.Hint}
		if !s.Until.IsZero() {
			args = append(args, "until", s.Until)
		}
		log.Error("bot stopped; the other bots keep running", args...)
	case bridges.ConnReconnecting:
		log.Warn("bot lost its connection; reconnecting", "reason", s.Reason)
	default:
		log.Info("bot connection state")
	}
}

// Statuses returns the state of each of bots that has one, in the order
// of bots.
func (b *Board) Statuses(bots []*config.Bot) []bridges.BotStatus {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []bridges.BotStatus
	for _, bot := range bots {
		s, ok := b.m[bot.Name]
		if !ok {
			continue
		}
		out = append(out, bridges.BotStatus{Bot: bot.Name, Platform: bot.Platform, BotState: s})
	}
	return out
}

// Failed is the state of a bot whose Run returned err.
func Failed(err error) bridges.BotState {
	if f, ok := errors.AsType[*bridges.Failure](err); ok {
		return bridges.BotState{State: bridges.ConnFailed, Reason: f.Reason, Remedy: f.Remedy, Hint: f.Hint, Until: f.Until}
	}
	if err == nil {
		err = errors.New("the adapter stopped without an error")
	}
	return bridges.BotState{State: bridges.ConnFailed, Reason: err.Error(), Remedy: bridges.RemedyRestart,
		Hint: "fix what the reason names, then restart the bridge"}
}
