package slack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	slackapi "github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
	"github.com/slack-go/slack/socketmode"

	"github.com/agentbridge/agentbridge/bridges"
)

// maxFailures is how many failed connection attempts in a row (auth.test
// or Socket Mode) the adapter tolerates before it gives up: with
// socketmode's back-off (doubling up to 5 minutes) about an hour and a
// half without Slack.
const maxFailures = 30

// Run connects with Socket Mode and delivers events to h until ctx ends
// (then it returns nil). The socket is reconnected after a "disconnect"
// envelope, a dropped connection or missing pings, with back-off between
// failed attempts. The connection state goes to bridges.ReportState:
// starting, connected (after Slack's hello), reconnecting (with the count
// of failed attempts and the last error). Run returns a *bridges.Failure
// wrapping ErrFatal, saying what to fix, for problems that retrying
// cannot fix (a bad, revoked or wrong kind of token, a missing scope, the
// app uninstalled) and after maxFailures failed attempts in a row. Run
// must not be called twice at the same time.
func (b *Bridge) Run(ctx context.Context, h bridges.Handler) error {
	if h == nil {
		return errors.New("slack: Run needs a handler")
	}
	defer b.httpClient.CloseIdleConnections()
	conn := bridges.NewConnReporter(h, b.maxFailures)
	conn.Starting()
	id, err := b.authTest(ctx, conn)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	b.setIdentity(id)
	b.log.Info("slack bot authenticated", slog.String("bot_user", id.userID), slog.String("bot_id", id.botID))

	sm := socketmode.New(b.api, socketmode.OptionLog(smLogger{log: b.log, redact: b.redact}))
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- b.runSocket(ctx, sm) }()
	var sock socketState
	for {
		select {
		case <-ctx.Done():
			<-done
			return nil
		case err := <-done:
			if ctx.Err() != nil {
				return nil
			}
			return err
		case ev := <-sm.Events:
			if err := b.handleEvent(ctx, sm, h, conn, &sock, ev); err != nil {
				cancel()
				<-done
				b.log.Error("slack bot stopped", slog.String("err", b.redact.Err(err)))
				return err
			}
		}
	}
}

// socketState is what Run remembers between socketmode events.
type socketState struct {
	lastErr string // the latest read error on the socket (redacted); "" after hello
}

// authTest learns the bot's ids, retrying transient failures until ctx
// ends or conn gives up.
func (b *Bridge) authTest(ctx context.Context, conn *bridges.ConnReporter) (identity, error) {
	delay := b.reconnectMin
	for {
		resp, err := b.api.AuthTestContext(ctx)
		if err == nil {
			return identity{userID: resp.UserID, botID: resp.BotID, teamID: resp.TeamID}, nil
		}
		if ctx.Err() != nil {
			return identity{}, ctx.Err()
		}
		if f := failureOf(err, botToken, "auth.test"); f != nil {
			return identity{}, fmt.Errorf("slack bot %q: %w", b.name, f)
		}
		if !conn.Failed("auth.test: " + b.redact.Err(err)) {
			return identity{}, fmt.Errorf("slack bot %q: %w", b.name, conn.GaveUp("Slack", fmt.Errorf("auth.test: %s", b.redact.Err(err))))
		}
		if rl, ok := errors.AsType[*slackapi.RateLimitedError](err); ok {
			delay = max(delay, rl.RetryAfter)
		}
		b.log.Warn("slack auth.test failed, retrying", slog.String("err", b.redact.Err(err)), slog.Duration("retry_in", delay))
		if !sleep(ctx, delay) {
			return identity{}, ctx.Err()
		}
		delay = min(delay*2, b.reconnectMax)
	}
}

// runSocket runs Socket Mode sessions until ctx ends (nil) or a fatal
// error (a *bridges.Failure). socketmode reconnects by itself after
// disconnects, dropped sockets and failed attempts (reported through its
// events, see handleEvent); this loop restarts it should it give up
// otherwise.
func (b *Bridge) runSocket(ctx context.Context, sm *socketmode.Client) error {
	delay := b.reconnectMin
	for restarts := 1; ; restarts++ {
		started := time.Now()
		err := sm.RunContext(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if f := failureOf(err, appToken, "apps.connections.open"); f != nil {
			return fmt.Errorf("slack bot %q: socket mode: %w", b.name, f)
		}
		if time.Since(started) > 2*b.reconnectMax {
			delay, restarts = b.reconnectMin, 1
		}
		if b.maxFailures > 0 && restarts >= b.maxFailures {
			return fmt.Errorf("slack bot %q: socket mode: %w", b.name, &bridges.Failure{
				Reason: fmt.Sprintf("Socket Mode stopped %d times in a row", restarts), Remedy: bridges.RemedyRestart,
				Hint: "check the network and the log, then restart the bridge", Err: errors.New(b.redact.Err(err))})
		}
		b.log.Warn("slack socket mode stopped, restarting", slog.String("err", b.redact.Err(err)), slog.Duration("retry_in", delay))
		if !sleep(ctx, delay) {
			return nil
		}
		delay = min(delay*2, b.reconnectMax)
	}
}

// sleep waits d or until ctx ends (false).
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// handleEvent deals with one socketmode event and reports the
// connection state through conn. It runs on Run's goroutine, so envelopes
// are handled in arrival order. A non-nil error (a *bridges.Failure) ends
// Run.
func (b *Bridge) handleEvent(ctx context.Context, sm *socketmode.Client, h bridges.Handler, conn *bridges.ConnReporter, sock *socketState, ev socketmode.Event) error {
	switch ev.Type {
	case socketmode.EventTypeConnecting:
		c, _ := ev.Data.(*slackapi.ConnectingEvent)
		if c != nil && c.ConnectionCount > 0 {
			reason := "the Socket Mode connection ended (dropped, timed out or refreshed by Slack)"
			if sock.lastErr != "" {
				reason = "the Socket Mode connection ended: " + sock.lastErr
			}
			conn.Lost(reason)
		}
		b.log.Debug("slack socket connecting")
	case socketmode.EventTypeConnected:
		n := 0
		if c, ok := ev.Data.(*socketmode.ConnectedEvent); ok {
			n = c.ConnectionCount
		}
		b.log.Info("slack socket connected", slog.Int("connection", n))
	case socketmode.EventTypeConnectionError:
		var err error = errors.New("unknown error")
		if c, ok := ev.Data.(*slackapi.ConnectionErrorEvent); ok && c.ErrorObj != nil {
			err = c.ErrorObj
		}
		// socketmode retries every error but four; a token of the wrong
		// kind or without connections:write would be retried forever.
		if f := failureOf(err, appToken, "apps.connections.open"); f != nil {
			return fmt.Errorf("slack bot %q: socket mode: %w", b.name, f)
		}
		msg := b.redact.Err(err)
		if !conn.Failed(msg) {
			return fmt.Errorf("slack bot %q: %w", b.name, conn.GaveUp("Slack", errors.New(msg)))
		}
		b.log.Warn("slack socket connection failed", slog.String("err", msg), slog.Int("attempt", conn.Failures()))
	case socketmode.EventTypeInvalidAuth:
		b.log.Error("slack rejected the app token")
	case socketmode.EventTypeHello:
		sock.lastErr = ""
		conn.Connected()
		b.log.Debug("slack socket hello")
	case socketmode.EventTypeIncomingError:
		msg := ""
		if c, ok := ev.Data.(*slackapi.IncomingEventError); ok {
			msg = b.redact.Err(c.ErrorObj)
		}
		sock.lastErr = msg
		b.log.Warn("slack socket read failed", slog.String("err", msg))
	case socketmode.EventTypeErrorWriteFailed:
		b.log.Warn("slack socket write failed; Slack will resend unacknowledged events")
	case socketmode.EventTypeErrorBadMessage:
		b.badMessage(ctx, sm, ev)
	case socketmode.EventTypeEventsAPI:
		if f := b.revoked(ev); f != nil {
			b.ack(ctx, sm, ev.Request)
			return fmt.Errorf("slack bot %q: %w", b.name, f)
		}
		b.eventsAPI(ctx, sm, h, ev)
	case socketmode.EventTypeInteractive:
		b.ack(ctx, sm, ev.Request)
		if cb, ok := ev.Data.(slackapi.InteractionCallback); ok {
			b.interaction(ctx, h, cb)
		}
	default:
		// slash commands and anything newer: nothing to do but ack.
		b.ack(ctx, sm, ev.Request)
	}
	return nil
}

// revoked returns the failure an app_uninstalled event, or a
// tokens_revoked event naming this bot, means (nil for other events).
func (b *Bridge) revoked(ev socketmode.Event) *bridges.Failure {
	outer, ok := ev.Data.(slackevents.EventsAPIEvent)
	if !ok || outer.Type != slackevents.CallbackEvent {
		return nil
	}
	switch e := outer.InnerEvent.Data.(type) {
	case *slackevents.AppUninstalledEvent:
		return revokedFailure(string(slackevents.AppUninstalled))
	case *slackevents.TokensRevokedEvent:
		self := b.identity()
		for _, id := range e.Tokens.Bot {
			if id == self.userID || id == self.botID {
				return revokedFailure(string(slackevents.TokensRevoked))
			}
		}
	}
	return nil
}

// ack acknowledges an envelope (nothing for requests without one).
func (b *Bridge) ack(ctx context.Context, sm *socketmode.Client, req *socketmode.Request) {
	if req == nil || req.EnvelopeID == "" {
		return
	}
	actx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	if err := sm.AckCtx(actx, req.EnvelopeID, nil); err != nil {
		b.log.Warn("slack ack failed", slog.String("envelope", req.EnvelopeID), slog.String("err", b.redact.Err(err)))
	}
}

// badMessage acks an envelope the library could not parse, so that Slack
// does not send it again forever.
func (b *Bridge) badMessage(ctx context.Context, sm *socketmode.Client, ev socketmode.Event) {
	bad, ok := ev.Data.(*socketmode.ErrorBadMessage)
	if !ok {
		return
	}
	var req socketmode.Request
	_ = json.Unmarshal(bad.Message, &req)
	b.log.Warn("slack sent an envelope that could not be parsed; acknowledging it",
		slog.String("type", req.Type), slog.String("envelope", req.EnvelopeID), slog.String("err", b.redact.Err(bad.Cause)))
	b.ack(ctx, sm, &req)
}

// eventsAPI handles an events_api envelope: messages and app mentions go
// through route; the envelope is acked unless the core failed to accept
// the message.
func (b *Bridge) eventsAPI(ctx context.Context, sm *socketmode.Client, h bridges.Handler, ev socketmode.Event) {
	outer, ok := ev.Data.(slackevents.EventsAPIEvent)
	if !ok || outer.Type != slackevents.CallbackEvent {
		b.ack(ctx, sm, ev.Request)
		return
	}
	var in incoming
	switch e := outer.InnerEvent.Data.(type) {
	case *slackevents.MessageEvent:
		in = fromMessageEvent(e)
	case *slackevents.AppMentionEvent:
		in = fromMentionEvent(e)
	default:
		b.ack(ctx, sm, ev.Request)
		return
	}
	if ev.Request != nil && ev.Request.RetryAttempt > 0 {
		b.log.Debug("slack event retry", slog.Int("attempt", ev.Request.RetryAttempt), slog.String("reason", ev.Request.RetryReason))
	}
	if err := b.route(ctx, h, in); err != nil {
		level := slog.LevelWarn
		if errors.Is(err, bridges.ErrStorageFull) {
			level = slog.LevelDebug // the store logs a full disk once a minute
		}
		b.log.Log(ctx, level, "slack message not accepted; leaving it for Slack to resend",
			slog.String("channel", in.channel), slog.String("msg_id", in.ts), slog.String("err", b.redact.Err(err)))
		return
	}
	b.ack(ctx, sm, ev.Request)
}

// smLogger sends socketmode's debug output to slog, redacted.
type smLogger struct {
	log    *slog.Logger
	redact redactor
}

func (l smLogger) Output(_ int, s string) error {
	l.log.Debug("slack socketmode", slog.String("detail", l.redact.String(strings.TrimSpace(s))))
	return nil
}
