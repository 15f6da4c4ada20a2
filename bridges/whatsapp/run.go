package whatsapp

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/store"

	"go.mau.fi/whatsmeow/types/events"

	"github.com/agentbridge/agentbridge/bridges"
)

// Run implements bridges.Platform: it registers the event handler,
// connects and delivers messages to h until ctx ends (nil) or WhatsApp
// ends the session for good (a *bridges.Failure wrapping ErrDisconnected
// that says what to do: relink, wait until a ban ends, upgrade).
// whatsmeow reconnects by itself after network errors, at most
// maxReconnects times in a row. The connection state goes to
// bridges.ReportState: connected, reconnecting (with the attempt), failed.
func (b *Bridge) Run(ctx context.Context, h bridges.Handler) error {
	b.mu.Lock()
	b.h = h
	b.runCtx = ctx
	b.mu.Unlock()
	fatal := b.fatal
	id := b.cli.AddEventHandlerWithSuccessStatus(func(evt any) bool {
		return b.handleEvent(ctx, evt, fatal)
	})
	defer b.cli.RemoveEventHandler(id)
	defer b.cli.Disconnect()
	defer b.stopTyping()
	if err := b.connect(ctx); err != nil {
		return err
	}
	select {
	case <-ctx.Done():
		return nil
	case err := <-fatal:
		return err
	}
}

// Connection attempts: at start Run tries to connect this many times with
// a doubling delay; once connected, whatsmeow reconnects by itself and
// gives up after maxReconnects failures in a row (reconnectHook).
const (
	maxConnectAttempts = 8
	maxReconnects      = 30
	maxConnectDelay    = time.Minute
)

// connect connects the client, retrying with back-off (nil when ctx ends).
func (b *Bridge) connect(ctx context.Context) error {
	delay := b.connectBackoff
	for attempt := 1; ; attempt++ {
		if b.cli.IsConnected() {
			return nil
		}
		err := b.cli.Connect()
		if err == nil || errors.Is(err, whatsmeow.ErrAlreadyConnected) {
			return nil
		}
		if errors.Is(err, store.ErrDeviceDeleted) {
			return b.failure("the device was deleted (logged out)", bridges.RemedyRelink, err)
		}
		if attempt >= maxConnectAttempts {
			return b.failure(fmt.Sprintf("could not connect after %d attempts", attempt), bridges.RemedyRestart, err)
		}
		b.report(bridges.BotState{State: bridges.ConnReconnecting, Reason: err.Error(), Attempt: attempt})
		b.log.Warn("whatsapp connect failed; retrying", "attempt", attempt, "retry_in", delay, "err", err)
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
		delay = min(2*delay, maxConnectDelay)
	}
}

// reconnectHook is the client's AutoReconnectHook: after maxReconnects
// failed reconnects in a row it stops the client's retries and ends Run.
func (b *Bridge) reconnectHook(errorsSoFar func() int) func(error) bool {
	return func(err error) bool {
		n := errorsSoFar()
		if n >= maxReconnects {
			b.fail(b.fatal, b.failure(fmt.Sprintf("gave up reconnecting after %d attempts", n), bridges.RemedyRestart, err))
			return false
		}
		b.report(bridges.BotState{State: bridges.ConnReconnecting, Reason: err.Error(), Attempt: n})
		return true
	}
}

// handleEvent is the client's event handler. It reports false when a
// message could not be recorded, so that WhatsApp delivers it again; a
// panic is recovered and reported as false too (whatsmeow would ack it).
func (b *Bridge) handleEvent(ctx context.Context, evt any, fatal chan<- error) (ok bool) {
	defer func() {
		if r := recover(); r != nil {
			b.log.Error("whatsapp event handler panicked", "err", fmt.Errorf("%v", r), "stack", string(debug.Stack()))
			ok = false
		}
	}()
	switch e := evt.(type) {
	case *events.Message:
		return b.onMessage(ctx, e)
	case *events.Connected:
		b.report(bridges.BotState{State: bridges.ConnConnected})
		go b.lookUpPhones(ctx) // not on the event loop: it waits for an answer
	case *events.Disconnected:
		b.report(bridges.BotState{State: bridges.ConnReconnecting, Reason: "the connection to WhatsApp was lost"})
	case *events.LoggedOut:
		b.fail(fatal, b.failure(fmt.Sprintf("logged out by WhatsApp or the phone (reason %v)", e.Reason), bridges.RemedyRelink, nil))
	case *events.StreamReplaced:
		b.fail(fatal, b.failure("another client uses this device", bridges.RemedyRelink, nil))
	case *events.TemporaryBan:
		f := b.failure(fmt.Sprintf("temporarily banned (%v)", e), bridges.RemedyWait, nil)
		if e.Expire > 0 {
			f.Until = time.Now().Add(e.Expire).Truncate(time.Second)
			f.Hint = "wait until the ban ends at " + f.Until.UTC().Format(time.RFC3339) + ", then restart the bridge; send less and use a dedicated number"
		}
		b.fail(fatal, f)
	case *events.ClientOutdated:
		b.fail(fatal, b.failure("WhatsApp refuses this client version", bridges.RemedyUpgrade, nil))
	case *events.ConnectFailure:
		b.fail(fatal, b.failure(fmt.Sprintf("connect failure %v %s", e.Reason, e.Message), bridges.RemedyRestart, nil))
	}
	return true
}

// failure is the permanent failure of this bot: what happened (reason),
// what to do (remedy, with a hint naming the command or setting), and
// the error, which wraps ErrDisconnected.
func (b *Bridge) failure(reason, remedy string, err error) *bridges.Failure {
	hint := map[string]string{
		bridges.RemedyRelink: fmt.Sprintf("link it again: `bridge whatsapp-link -config %s -bot %s -relink` (never run two bridges on one device store)",
			cmp.Or(b.configPath, "bridge.yaml"), b.bot),
		bridges.RemedyWait:    "wait until the ban ends, then restart the bridge; send less and use a dedicated number",
		bridges.RemedyUpgrade: "upgrade the bridge (its WhatsApp library is too old)",
		bridges.RemedyRestart: "check the network and the log, then restart the bridge",
	}[remedy]
	if err == nil {
		err = ErrDisconnected
	} else {
		err = fmt.Errorf("%w: %w", ErrDisconnected, err)
	}
	return &bridges.Failure{Reason: "whatsapp bot " + b.bot + ": " + reason, Remedy: remedy, Hint: hint, Err: err}
}

// fail reports a permanent failure (once) and ends Run with it.
func (b *Bridge) fail(fatal chan<- error, f *bridges.Failure) {
	b.report(bridges.BotState{State: bridges.ConnFailed, Reason: f.Reason, Remedy: f.Remedy, Hint: f.Hint, Until: f.Until})
	select {
	case fatal <- f:
	default:
	}
}

// report tells the core how the connection stands (before Run: nobody).
func (b *Bridge) report(s bridges.BotState) {
	if h := b.handler(); h != nil {
		bridges.ReportState(h, s)
	}
}

// handler is the core given to Run (nil before).
func (b *Bridge) handler() bridges.Handler {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.h
}
