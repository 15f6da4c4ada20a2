package bridges

// ConnReporter is the bookkeeping of an adapter's connect loop: it reports
// the bot's connection state through ReportState and counts the failed
// attempts in a row, so that the adapters report alike. It never gives
// up: an adapter retries transient failures forever, waiting
// Backoff.Delay(Failures()) between attempts, and stops only for a
// permanent failure, which Run returns as a *Failure (the core then marks
// the bot failed). It is not safe for concurrent use: the goroutine that
// runs the connect loop owns it.
type ConnReporter struct {
	h        Handler
	failures int  // failed attempts since the last connection
	up       bool // connected
}

// NewConnReporter reports through h (a handler that is no StateReporter
// hears nothing).
func NewConnReporter(h Handler) *ConnReporter {
	return &ConnReporter{h: h}
}

// Starting reports that the adapter is connecting for the first time.
func (r *ConnReporter) Starting() {
	ReportState(r.h, BotState{State: ConnStarting})
}

// Connected reports that the connection is up and receiving (after the
// platform's hello / READY) and forgets earlier failures.
func (r *ConnReporter) Connected() {
	r.up, r.failures = true, 0
	ReportState(r.h, BotState{State: ConnConnected})
}

// Up reports whether the last report was Connected.
func (r *ConnReporter) Up() bool { return r.up }

// Lost reports that an established connection ended (reason says how; it
// must not carry secrets) and that the adapter reconnects. It is a no-op
// when the connection was not up.
func (r *ConnReporter) Lost(reason string) {
	if !r.up {
		return
	}
	r.up = false
	ReportState(r.h, BotState{State: ConnReconnecting, Reason: reason})
}

// Failed records a failed attempt to connect (reason: the error, without
// secrets) and reports ConnReconnecting with the count of failed attempts
// in a row. The core keeps the state's Since at the start of the outage.
func (r *ConnReporter) Failed(reason string) {
	r.up = false
	r.failures++
	ReportState(r.h, BotState{State: ConnReconnecting, Reason: reason, Attempt: r.failures})
}

// Failures is the number of failed attempts since the last connection.
func (r *ConnReporter) Failures() int { return r.failures }
