package whatsapp

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/store"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"
	waLog "go.mau.fi/whatsmeow/util/log"
)

// Run implements bridges.Platform: it registers the event handler,
// connects and delivers messages to h until ctx ends (nil) or WhatsApp
// ends the session for good (a *bridges.Failure wrapping ErrDisconnected
// that says what to do: relink, wait until a ban ends, upgrade). Run owns
// the reconnects (Open turns whatsmeow's own off: its delay grows by 2 s
// per failure without a cap): after a lost connection, or keep-alives
// failing for whatsmeow.KeepAliveMaxFailTime, it connects again, retrying
// transient failures forever — at start-up too — with b.reconnect's
// capped back-off and jitter. The connection state goes to
// bridges.ReportState: connected, reconnecting (with the attempt and the
// last error), failed.
func (b *Bridge) Run(ctx context.Context, h bridges.Handler) error {
	b.tasks.Open()
	defer b.tasks.Close() // last: after the typing loops are cancelled and the client is gone
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // ends the number lookup and every typing refresh
	b.mu.Lock()
	b.h = h
	b.runCtx = ctx
	b.mu.Unlock()
	b.phoneSeen.Store(b.now().UnixNano())
	fatal := b.fatal
	id := b.cli.AddEventHandlerWithSuccessStatus(func(evt any) bool {
		return b.handleEvent(ctx, evt, fatal)
	})
	defer b.cli.RemoveEventHandler(id)
	defer b.cli.Disconnect()
	defer b.stopTyping()
	defer b.stopRecoveries()
	b.mu.Lock()
	g := b.gate
	b.mu.Unlock()
	if g == nil {
		return b.serve(ctx, fatal)
	}
	return g.Hold(ctx, h, func(ctx context.Context) error {
		b.report(bridges.BotState{State: bridges.ConnStarting})
		err := b.serve(ctx, fatal)
		b.cli.Disconnect() // at once: the next holder connects next
		return err
	})
}

// SetConnGate implements bridges.ConnGated: with a gate (replicas), Run
// connects the linked device only while the gate lets it — one replica at
// a time, as WhatsApp lets one client use a device (a second replaces
// the first, and WhatsApp ends by logging the device out) — and stands by
// otherwise. Call it before Run.
func (b *Bridge) SetConnGate(g bridges.ConnGate) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.gate = g
}

// serve connects the client and keeps it connected until ctx ends (nil)
// or WhatsApp ends the session for good (the failure).
func (b *Bridge) serve(ctx context.Context, fatal chan error) error {
	for {
		if err := b.connect(ctx); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case err := <-fatal:
			return err
		case stale := <-b.redial:
			if stale {
				b.cli.Disconnect() // a half-dead socket: drop it first
			}
		case <-b.outdated:
			if err := b.refreshVersion(ctx); err != nil {
				b.fail(fatal, b.failure("WhatsApp refuses this client version", bridges.RemedyUpgrade, err))
				return <-fatal
			}
			b.cli.Disconnect() // the refused connection; connect with the new version
		}
	}
}

// connect connects the client unless it is connected, retrying transient
// failures with b.reconnect's back-off until it succeeds or ctx ends
// (nil either way). Only a deleted device (logged out) is permanent. The
// count of failed attempts in a row goes on across calls until WhatsApp
// accepts the login (events.Connected).
func (b *Bridge) connect(ctx context.Context) error {
	for {
		if ctx.Err() != nil || b.cli.IsConnected() {
			return nil
		}
		if n := b.failures.Load(); n > 0 && !b.reconnect.Wait(ctx, int(n)) {
			return nil
		}
		err := b.cli.Connect()
		if err == nil || errors.Is(err, whatsmeow.ErrAlreadyConnected) {
			return nil
		}
		if errors.Is(err, store.ErrDeviceDeleted) {
			return b.failure("the device was deleted (logged out)", bridges.RemedyRelink, err)
		}
		n := b.failures.Add(1)
		b.report(bridges.BotState{State: bridges.ConnReconnecting, Reason: err.Error(), Attempt: int(n)})
		b.log.Warn("whatsapp connect failed; retrying", "attempt", n, "err", err)
	}
}

// reconnectSoon asks Run to connect again (stale: drop the current socket
// first). It never blocks; one pending request is enough.
func (b *Bridge) reconnectSoon(stale bool) {
	select {
	case b.redial <- stale:
	default:
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
		b.notePhone(e.Info.MessageSource)
		b.checkPhone()
		return b.onMessage(ctx, e)
	case *events.Receipt:
		b.notePhone(e.MessageSource)
	case *events.UndecryptableMessage:
		if h := b.handler(); h != nil {
			b.onUndecryptable(ctx, h, e)
		}
	case *events.Connected:
		b.failures.Store(0)
		b.up.Store(true)
		b.report(bridges.BotState{State: bridges.ConnConnected})
		b.checkPhone()
		b.sendPresence(ctx)
		if !b.lookedUp.Swap(true) { // once: the mappings are stored
			b.tasks.Go(func() { b.lookUpPhones(ctx) }) // not on the event loop: it waits for an answer
		}
	case *events.PushNameSetting:
		b.sendPresence(ctx) // the first one after linking failed for want of a name
	case *events.Disconnected:
		reason, n := "the connection to WhatsApp was lost", b.failures.Load()
		if !b.up.Swap(false) {
			// Closed before the login completed (e.g. a 503 at login): a
			// failed attempt, so that the next one waits.
			reason, n = "WhatsApp closed the connection before the login completed", b.failures.Add(1)
		}
		b.report(bridges.BotState{State: bridges.ConnReconnecting, Reason: reason, Attempt: int(n)})
		b.reconnectSoon(false)
	case *events.KeepAliveTimeout:
		if time.Since(e.LastSuccess) > whatsmeow.KeepAliveMaxFailTime {
			b.up.Store(false)
			b.report(bridges.BotState{State: bridges.ConnReconnecting,
				Reason: fmt.Sprintf("WhatsApp has not answered keep-alives for %s", time.Since(e.LastSuccess).Round(time.Second))})
			b.reconnectSoon(true)
		}
	case *events.LoggedOut:
		b.fail(fatal, b.loggedOut(e.Reason))
	case *events.StreamReplaced:
		f := b.failure("another process connected with this device (stream replaced)", bridges.RemedyRestart, nil)
		f.Hint = "stop the other process using this bot's device store (a second bridge, or a copy of the data directory), " +
			"then restart this one; do not relink: that deletes the device the other process uses"
		b.fail(fatal, f)
	case *events.TemporaryBan:
		f := b.failure(fmt.Sprintf("temporarily banned (%v)", e), bridges.RemedyWait, nil)
		if e.Expire > 0 {
			f.Until = time.Now().Add(e.Expire).Truncate(time.Second)
			f.Hint = "wait until the ban ends at " + f.Until.UTC().Format(time.RFC3339) + ", then restart the bridge; send less and use a dedicated number"
		}
		b.fail(fatal, f)
	case *events.ClientOutdated:
		if b.refresh == nil || b.refreshed.Swap(true) {
			b.fail(fatal, b.failure("WhatsApp refuses this client version", bridges.RemedyUpgrade, nil))
			break
		}
		select { // Run fetches the current version and connects again
		case b.outdated <- struct{}{}:
		default:
		}
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
		bridges.RemedyRelink:  b.relinkCommand() + " (never run two bridges on one device store)",
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

// loggedOut is the failure of a device WhatsApp logged out, with the
// remedy its reason calls for: a locked (403) or banned (406) account is
// resolved in the WhatsApp app, not by relinking.
func (b *Bridge) loggedOut(reason events.ConnectFailureReason) *bridges.Failure {
	switch reason {
	case events.ConnectFailureMainDeviceGone: // 403, "locked" in WhatsApp Web
		f := b.failure("WhatsApp locked this account (reason 403)", bridges.RemedyAccount, nil)
		f.Hint = "open WhatsApp on the bot's phone and follow its instructions to unlock the account, then " + b.relinkCommand()
		return f
	case events.ConnectFailureUnknownLogout: // 406, "banned" in WhatsApp Web
		f := b.failure("WhatsApp banned this number (reason 406)", bridges.RemedyAccount, nil)
		f.Hint = "the number is banned: request a review in the WhatsApp app on the phone, or use another number; relinking does not help"
		return f
	}
	return b.failure(fmt.Sprintf("logged out by WhatsApp or the phone (reason %v)", reason), bridges.RemedyRelink, nil)
}

// relinkCommand is the command that links the bot again.
func (b *Bridge) relinkCommand() string {
	return fmt.Sprintf("link it again: `bridge whatsapp-link -config %s -bot %s -relink`", cmp.Or(b.configPath, "bridge.yaml"), b.bot)
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

// Logger adapts log to whatsmeow's logger interface. Messages are
// formatted with fmt.Sprintf and logged at the matching slog level with a
// "module" attribute (sub-loggers join their names with "/"). A nil log
// gives whatsmeow's no-op logger.
func Logger(log *slog.Logger, module string) waLog.Logger {
	if log == nil {
		return waLog.Noop
	}
	return &slogLogger{log: log, module: module}
}

type slogLogger struct {
	log    *slog.Logger
	module string
}

func (l *slogLogger) logf(level slog.Level, msg string, args []any) {
	ctx := context.Background()
	if !l.log.Enabled(ctx, level) {
		return // skip formatting debug chatter nobody reads
	}
	if len(args) > 0 {
		msg = fmt.Sprintf(msg, args...)
	}
	l.log.Log(ctx, level, msg, "module", l.module)
}

func (l *slogLogger) Debugf(msg string, args ...any) { l.logf(slog.LevelDebug, msg, args) }
func (l *slogLogger) Infof(msg string, args ...any)  { l.logf(slog.LevelInfo, msg, args) }
func (l *slogLogger) Warnf(msg string, args ...any)  { l.logf(slog.LevelWarn, msg, args) }
func (l *slogLogger) Errorf(msg string, args ...any) { l.logf(slog.LevelError, msg, args) }

// Sub returns a logger for a part of the module ("Client" → "Client/Socket").
func (l *slogLogger) Sub(module string) waLog.Logger {
	name := module
	if l.module != "" {
		name = l.module + "/" + module
	}
	return &slogLogger{log: l.log, module: name}
}

// sendPresence tells WhatsApp the bot's presence after connecting (and
// when the push name arrives after linking): without it other people see
// "-" as its name. "Unavailable" keeps the phone's notifications. Before
// the first app-state sync brings the push name it fails with
// whatsmeow.ErrNoPushName, and PushNameSetting sends it again.
func (b *Bridge) sendPresence(ctx context.Context) {
	err := b.cli.SendPresence(ctx, types.PresenceUnavailable)
	switch {
	case err == nil:
	case errors.Is(err, whatsmeow.ErrNoPushName):
		b.log.Debug("whatsapp presence waits for the push name", "err", err)
	default:
		b.log.Warn("whatsapp presence not sent", "err", err)
	}
}

// refreshVersion makes the client use WhatsApp Web's current version
// (once: a second "outdated" is a failure), for Run to connect again; it
// fails when the version cannot be fetched or did not change.
func (b *Bridge) refreshVersion(ctx context.Context) error {
	changed, err := b.refresh(ctx)
	if err != nil {
		return fmt.Errorf("fetch the current WhatsApp Web version: %w", err)
	}
	if !changed {
		return errors.New("the current WhatsApp Web version is the one refused")
	}
	b.log.Warn("whatsapp said this client is outdated: using the current WhatsApp Web version; upgrade the bridge soon")
	return nil
}
