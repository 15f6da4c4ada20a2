package bridges

import (
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
	// ConnStandby: another replica holds the bot's one connection (a
	// ConnGate's lease); this one takes it over when that one stops or
	// dies. BotState.Reason names the holder. Healthy, like connected.
	ConnStandby ConnState = "standby"
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
