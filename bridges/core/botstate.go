package core

import "strings"

import "fmt"

import "context"

import "errors"

import "github.com/agentbridge/agentbridge/bridges"

import "github.com/agentbridge/agentbridge/bridges/render"

// failedState is the state of a bot whose Run returned err.
func failedState(err error) bridges.BotState {
	if f, ok := errors.AsType[*bridges.Failure](err); ok {
		return bridges.BotState{State: bridges.ConnFailed, Reason: f.Reason, Remedy: f.Remedy, Hint: f.Hint, Until: f.Until}
	}
	if err == nil {
		err = errors.New("the adapter stopped without an error")
	}
	return bridges.BotState{State: bridges.ConnFailed, Reason: err.Error(), Remedy: bridges.RemedyRestart,
		Hint: "fix what the reason names, then restart the bridge"}
}

// botHandler is the Handler a platform's Run gets: the core, plus the
// StateReporter of that one bot (an adapter cannot report for another).
type botHandler struct {
	*Core
	bot string
}

var _ bridges.StateReporter = botHandler{}

// ReportState implements StateReporter.
func (h botHandler) ReportState(s bridges.BotState) { h.setState(h.bot, s) }

// setState records bot's state, logging changes of state (a failure once,
// with what to do).
func (c *Core) setState(bot string, s bridges.BotState) {
	c.mu.Lock()
	old, had := c.states[bot]
	if had && old.State == bridges.ConnFailed {
		c.mu.Unlock()
		return // failed is final: Run ends next
	}
	s.Since = c.clock.Now()
	if had && old.State == s.State {
		s.Since = old.Since
	}
	if c.states == nil {
		c.states = make(map[string]bridges.BotState)
	}
	c.states[bot] = s
	c.mu.Unlock()
	if had && old.State == s.State {
		return
	}
	log := c.log.With("bot", bot, "state", string(s.State))
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

// BotStates returns the state of every configured bot that the core runs,
// in configuration order. It is safe to call at any time (empty before
// Run).
func (c *Core) BotStates() []bridges.BotStatus {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []bridges.BotStatus
	for _, b := range c.cfg().Bots {
		s, ok := c.states[b.Name]
		if !ok {
			continue
		}
		out = append(out, bridges.BotStatus{Bot: b.Name, Platform: b.Platform, BotState: s})
	}
	return out
}

// runPlatform runs bot's adapter until ctx ends or it fails for good. A
// failure marks the bot failed and is returned; the other bots go on.
func (c *Core) runPlatform(ctx context.Context, name string, p bridges.Platform) error {
	initial := bridges.ConnRunning
	if p.Limits().ReportsState {
		initial = bridges.ConnStarting
	}
	c.setState(name, bridges.BotState{State: initial})
	err := p.Run(ctx, botHandler{c, name})
	if ctx.Err() != nil {
		return nil
	}
	c.setState(name, failedState(err))
	if err == nil {
		err = errors.New("the adapter stopped without an error")
	}
	return fmt.Errorf("platform of bot %s: %w", name, err)
}

// connectionLines are !status's lines about connections: this bot's
// state and, for an admin, every other bot that is not connected or
// running (others do not learn the names of the bridge's other bots).
func (cv *conversation) connectionLines(who author) string {
	var b strings.Builder
	now := cv.core.clock.Now()
	for _, s := range cv.core.BotStates() {
		switch {
		case s.Bot == cv.bot.Name:
			b.WriteString("\n• connection: " + render.StateSummary(s, now))
		case isAdmin(cv.bot, who.id) && s.State != bridges.ConnConnected && s.State != bridges.ConnRunning:
			b.WriteString("\n• bot " + codeSpan(s.Bot) + ": " + render.StateSummary(s, now))
		}
	}
	return b.String()
}

var _ bridges.MessageCounter = botHandler{}

// CountMessage implements bridges.MessageCounter.
func (h botHandler) CountMessage(outcome string) { h.opts.Metrics.Message(h.bot, outcome) }
