package bridges

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// ConnState is where a bot's connection to its platform stands.
type ConnState string

// Connection states. An adapter that reports its state (Limits.ReportsState)
// moves between starting, connected and reconnecting and may end in failed;
// the core shows any other adapter as running while its Run runs, and as
// failed when Run returns an error.
const (
	ConnStarting     ConnState = "starting"     // Run called, not connected yet
	ConnConnected    ConnState = "connected"    // connected and receiving
	ConnReconnecting ConnState = "reconnecting" // connection lost; retrying with back-off
	ConnRunning      ConnState = "running"      // Run runs; the adapter reports nothing finer
	ConnFailed       ConnState = "failed"       // stopped for good: BotState.Remedy says what to do
)

// Remedies: what an operator does about a failed bot (BotState.Remedy).
const (
	RemedyRelink  = "relink"  // link the device again (e.g. WhatsApp logged out)
	RemedyWait    = "wait"    // wait until BotState.Until (a temporary ban), then restart
	RemedyUpgrade = "upgrade" // the platform refuses this client version: upgrade the bridge
	RemedyRestart = "restart" // fix what Reason names (credentials, configuration), then restart
	// RemedyAccount: the platform account itself needs attention in the
	// platform's own app (locked, banned); relinking alone does not help.
	RemedyAccount = "account"
)

// BotState is a bot's connection state, as its adapter reports it through
// ReportState (or as the core infers it from Run). Reason and Hint are
// meant for operators: they never carry secrets.
type BotState struct {
	State   ConnState
	Reason  string    // what happened: reconnecting, the last error; failed, why
	Remedy  string    // failed: one of the Remedy constants
	Hint    string    // failed: what to do, as a sentence (a command to run, a setting to fix)
	Until   time.Time // RemedyWait: when the wait ends (zero = unknown)
	Attempt int       // reconnecting: failed attempts in a row so far
	Since   time.Time // when State began (reconnecting: the start of the outage, kept across attempts); set by the core
}

// BotStatus is one configured bot's state (Core.BotStates).
type BotStatus struct {
	Bot      string
	Platform string
	BotState
}

// StateReporter is implemented by the Handler the core gives each
// platform's Run: the adapter's seam for telling the core (and through it
// /healthz, !status and the operator page) how its connection stands.
type StateReporter interface {
	// ReportState records the bot's state. It never blocks and may be
	// called from any goroutine; reporting ConnFailed is logged once.
	ReportState(s BotState)
}

// ReportState reports s through h when h accepts reports (the core's
// handler does; test stubs need not).
func ReportState(h Handler, s BotState) {
	if r, ok := h.(StateReporter); ok {
		r.ReportState(s)
	}
}

// Failure is a permanent failure of one bot that says what to do: a
// Platform's Run returns it (wrapped or not) when reconnecting cannot help.
// The core then marks that bot failed and keeps the other bots running.
type Failure struct {
	Reason string    // what happened
	Remedy string    // one of the Remedy constants
	Hint   string    // what to do, as a sentence
	Until  time.Time // RemedyWait: when the wait ends
	Err    error     // the underlying error, if any
}

func (f *Failure) Error() string {
	var b strings.Builder
	b.WriteString(f.Reason)
	if f.Hint != "" {
		b.WriteString(": " + f.Hint)
	}
	if f.Err != nil {
		b.WriteString(" (" + f.Err.Error() + ")")
	}
	return b.String()
}

func (f *Failure) Unwrap() error { return f.Err }

// failedState is the state of a bot whose Run returned err.
func failedState(err error) BotState {
	if f, ok := errors.AsType[*Failure](err); ok {
		return BotState{State: ConnFailed, Reason: f.Reason, Remedy: f.Remedy, Hint: f.Hint, Until: f.Until}
	}
	if err == nil {
		err = errors.New("the adapter stopped without an error")
	}
	return BotState{State: ConnFailed, Reason: err.Error(), Remedy: RemedyRestart,
		Hint: "fix what the reason names, then restart the bridge"}
}

// botHandler is the Handler a platform's Run gets: the core, plus the
// StateReporter of that one bot (an adapter cannot report for another).
type botHandler struct {
	*Core
	bot string
}

var _ StateReporter = botHandler{}

// ReportState implements StateReporter.
func (h botHandler) ReportState(s BotState) { h.setState(h.bot, s) }

// setState records bot's state, logging changes of state (a failure once,
// with what to do).
func (c *Core) setState(bot string, s BotState) {
	c.mu.Lock()
	old, had := c.states[bot]
	if had && old.State == ConnFailed {
		c.mu.Unlock()
		return // failed is final: Run ends next
	}
	s.Since = c.clock.Now()
	if had && old.State == s.State {
		s.Since = old.Since
	}
	if c.states == nil {
		c.states = make(map[string]BotState)
	}
	c.states[bot] = s
	c.mu.Unlock()
	if had && old.State == s.State {
		return
	}
	log := c.log.With("bot", bot, "state", string(s.State))
	switch s.State {
	case ConnFailed:
		args := []any{"reason", s.Reason, "remedy", s.Remedy, "hint", s.Hint}
		if !s.Until.IsZero() {
			args = append(args, "until", s.Until)
		}
		log.Error("bot stopped; the other bots keep running", args...)
	case ConnReconnecting:
		log.Warn("bot lost its connection; reconnecting", "reason", s.Reason)
	default:
		log.Info("bot connection state")
	}
}

// BotStates returns the state of every configured bot that the core runs,
// in configuration order. It is safe to call at any time (empty before
// Run).
func (c *Core) BotStates() []BotStatus {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []BotStatus
	for _, b := range c.cfg.Bots {
		s, ok := c.states[b.Name]
		if !ok {
			continue
		}
		out = append(out, BotStatus{Bot: b.Name, Platform: b.Platform, BotState: s})
	}
	return out
}

// runPlatform runs bot's adapter until ctx ends or it fails for good. A
// failure marks the bot failed and is returned; the other bots go on.
func (c *Core) runPlatform(ctx context.Context, name string, p Platform) error {
	initial := ConnRunning
	if p.Limits().ReportsState {
		initial = ConnStarting
	}
	c.setState(name, BotState{State: initial})
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

// stateSummary is a bot's state in one line for chat (!status) at now.
// A reconnecting bot says since when (the start of the outage, and how
// long ago), how many attempts failed and the last error.
func stateSummary(s BotStatus, now time.Time) string {
	line := string(s.State)
	if s.State == ConnReconnecting && !s.Since.IsZero() {
		line += " since " + s.Since.UTC().Format("2006-01-02 15:04:05 UTC") + " (" + roundAgo(now.Sub(s.Since)) + " ago"
		if s.Attempt > 0 {
			line += fmt.Sprintf(", %d failed attempts", s.Attempt)
		}
		line += ")"
	}
	if s.State == ConnFailed || s.State == ConnReconnecting {
		if s.Reason != "" {
			sep := ": "
			if s.State == ConnReconnecting && s.Attempt > 0 {
				sep = "; last error: "
			}
			line += sep + oneLine(s.Reason, 200)
		}
		if s.Hint != "" {
			line += " — " + oneLine(s.Hint, 200)
		}
		if !s.Until.IsZero() {
			line += " (until " + s.Until.UTC().Format(time.RFC3339) + ")"
		}
	}
	return line
}

// roundAgo is d for people: whole seconds under a minute, else whole
// minutes (never negative).
func roundAgo(d time.Duration) string {
	d = max(d, 0)
	if d < time.Minute {
		return d.Round(time.Second).String()
	}
	return strings.TrimSuffix(d.Truncate(time.Minute).String(), "0s")
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
			b.WriteString("\n• connection: " + stateSummary(s, now))
		case isAdmin(cv.bot, who.id) && s.State != ConnConnected && s.State != ConnRunning:
			b.WriteString("\n• bot " + codeSpan(s.Bot) + ": " + stateSummary(s, now))
		}
	}
	return b.String()
}
