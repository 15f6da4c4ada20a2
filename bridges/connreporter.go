package bridges

import "fmt"

// ConnReporter is the bookkeeping of an adapter's connect loop: it reports
// the bot's connection state through ReportState and counts the failed
// attempts in a row, so that the adapters report alike and give up after
// a bounded number of failures (their back-off between attempts is their
// own). It is not safe for concurrent use: the goroutine that runs the
// connect loop owns it. A permanent failure is not reported here: Run
// returns it as a *Failure and the core marks the bot failed.
type ConnReporter struct {
	h           Handler
	maxFailures int
	failures    int  // failed attempts since the last connection
	up          bool // connected
}

// NewConnReporter reports through h (a handler that is no StateReporter
// hears nothing). After maxFailures failed attempts in a row Failed says
// to give up; maxFailures <= 0 never gives up.
func NewConnReporter(h Handler, maxFailures int) *ConnReporter {
	return &ConnReporter{h: h, maxFailures: maxFailures}
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
// secrets). It reports ConnReconnecting with the count of failed attempts
// in a row and returns true, or returns false without reporting once that
// count reaches the maximum: the adapter then stops and returns GaveUp.
func (r *ConnReporter) Failed(reason string) (retry bool) {
	r.up = false
	r.failures++
	if r.maxFailures > 0 && r.failures >= r.maxFailures {
		return false
	}
	ReportState(r.h, BotState{State: ConnReconnecting, Reason: reason, Attempt: r.failures})
	return true
}

// Failures is the number of failed attempts since the last connection.
func (r *ConnReporter) Failures() int { return r.failures }

// GaveUp is the Failure of an adapter that stopped retrying after Failed
// returned false: platform names what it could not reach, err is the last
// error.
func (r *ConnReporter) GaveUp(platform string, err error) *Failure {
	return &Failure{
		Reason: fmt.Sprintf("gave up connecting to %s after %d failed attempts in a row", platform, r.failures),
		Remedy: RemedyRestart,
		Hint:   "check the network, the proxy and the platform's status page, then restart the bridge",
		Err:    err,
	}
}
