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

// Run connects with Socket Mode and delivers events to h until ctx ends
// (then it returns nil). The socket is reconnected after a "disconnect"
// envelope, a dropped connection or missing pings. Transient failures
// (network errors, DNS, 5xx or ok:false answers of auth.test and
// apps.connections.open, a refused websocket) are retried forever, at
// start-up too, with b.reconnect's capped back-off and jitter (Slack's
// socketmode client would wait up to 5 minutes on its own: Run ends its
// session at the first failed attempt and starts a new one after its own
// delay). The connection state goes to bridges.ReportState: starting,
// connected (after Slack's hello), reconnecting (with the count of failed
// attempts and the last error). Run returns a *bridges.Failure wrapping
// ErrFatal, saying what to fix, only for problems that retrying cannot
// fix (a bad, revoked or wrong kind of token, a missing scope, the app
// uninstalled). Run must not be called twice at the same time.
func (b *Bridge) Run(ctx context.Context, h bridges.Handler) error {
	if h == nil {
		return errors.New("slack: Run needs a handler")
	}
	defer b.httpClient.CloseIdleConnections()
	conn := bridges.NewConnReporter(h)
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
	redial := make(chan time.Duration, 1) // handleEvent → runSocket: an attempt failed, wait this long
	go func() { done <- b.runSocket(ctx, sm, redial) }()
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
			if sock.retryIn > 0 {
				select {
				case redial <- sock.retryIn:
				default: // a new session is already due
				}
				sock.retryIn = 0
			}
		}
	}
}

// socketState is what Run remembers between socketmode events.
type socketState struct {
	lastErr string        // the latest read error on the socket (redacted); "" after hello
	retryIn time.Duration // > 0: the event was a failed connection attempt; start a new session after this delay
}

// authTest learns the bot's ids, retrying transient failures until ctx
// ends.
func (b *Bridge) authTest(ctx context.Context, conn *bridges.ConnReporter) (identity, error) {
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
		conn.Failed("auth.test: " + b.redact.Err(err))
		delay := b.reconnect.Delay(conn.Failures())
		if rl, ok := errors.AsType[*slackapi.RateLimitedError](err); ok {
			delay = max(delay, rl.RetryAfter)
		}
		b.log.Warn("slack auth.test failed, retrying", slog.String("err", b.redact.Err(err)),
			slog.Int("attempt", conn.Failures()), slog.Duration("retry_in", delay))
		if !b.reconnect.Sleep(ctx, delay) {
			return identity{}, ctx.Err()
		}
	}
}

// runSocket runs Socket Mode sessions until ctx ends (nil) or a fatal
// error (a *bridges.Failure). A session ends when socketmode's RunContext
// returns, or when handleEvent saw a failed connection attempt (redial
// carries the delay it chose: b.reconnect's, or Slack's Retry-After):
// socketmode would retry after its own delay (up to 5 minutes, no
// jitter), so the session is cancelled and a new one starts after that
// delay. Transient errors never end the loop.
func (b *Bridge) runSocket(ctx context.Context, sm *socketmode.Client, redial <-chan time.Duration) error {
	restarts := 0 // sessions that ended by themselves in a row
	for {
		started := time.Now()
		retryIn, err := b.socketSession(ctx, sm, redial)
		if ctx.Err() != nil {
			return nil
		}
		if f := failureOf(err, appToken, "apps.connections.open"); f != nil {
			return fmt.Errorf("slack bot %q: socket mode: %w", b.name, f)
		}
		if retryIn == 0 { // RunContext returned by itself
			if time.Since(started) > sessionCalm {
				restarts = 0
			}
			restarts++
			retryIn = b.reconnect.Delay(restarts)
			b.log.Warn("slack socket mode stopped, restarting", slog.String("err", b.redact.Err(err)),
				slog.Int("attempt", restarts), slog.Duration("retry_in", retryIn))
		} else {
			restarts = 0
		}
		if !b.reconnect.Sleep(ctx, retryIn) {
			return nil
		}
	}
}

// sessionCalm: a Socket Mode session that ran this long before it
// ended by itself starts the back-off afresh.
const sessionCalm = time.Minute

// socketSession runs one socketmode session. It returns RunContext's
// error with retryIn 0 when the session ended by itself, or the delay
// from redial (> 0) after cancelling the session because a connection
// attempt failed.
func (b *Bridge) socketSession(ctx context.Context, sm *socketmode.Client, redial <-chan time.Duration) (retryIn time.Duration, err error) {
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errc := make(chan error, 1)
	go func() { errc <- sm.RunContext(sctx) }()
	select {
	case err := <-errc:
		return 0, err
	case d := <-redial:
		cancel()
		<-errc
		return d, nil
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
		if errors.Is(err, context.Canceled) {
			break // runSocket ended the session
		}
		// socketmode retries every error but four; a token of the wrong
		// kind or without connections:write would be retried forever.
		if f := failureOf(err, appToken, "apps.connections.open"); f != nil {
			return fmt.Errorf("slack bot %q: socket mode: %w", b.name, f)
		}
		msg := b.redact.Err(err)
		conn.Failed(msg)
		sock.retryIn = b.reconnect.Delay(conn.Failures())
		if rl, ok := errors.AsType[*slackapi.RateLimitedError](err); ok {
			sock.retryIn = max(sock.retryIn, rl.RetryAfter)
		}
		b.log.Warn("slack socket connection failed", slog.String("err", msg), slog.Int("attempt", conn.Failures()),
			slog.Duration("retry_in", sock.retryIn))
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
