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

// fatalCode reports whether a Slack error code is one that retrying
// cannot fix.
func fatalCode(code string) bool {
	switch code {
	case "invalid_auth", "not_authed", "account_inactive", "token_revoked", "token_expired",
		"missing_scope", "not_allowed_token_type", "invalid_token":
		return true
	}
	return false
}

// Run connects with Socket Mode and delivers events to h until ctx ends
// (then it returns nil). The socket is reconnected after a "disconnect"
// envelope, a dropped connection or missing pings, with backoff between
// failed attempts. Run returns an error wrapping ErrFatal for problems
// that retrying cannot fix (bad or revoked tokens, missing scopes). Run
// must not be called twice at the same time.
func (b *Bridge) Run(ctx context.Context, h bridges.Handler) error {
	if h == nil {
		return errors.New("slack: Run needs a handler")
	}
	defer b.httpClient.CloseIdleConnections()
	id, err := b.authTest(ctx)
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
			b.handleEvent(ctx, sm, h, ev)
		}
	}
}

// authTest learns the bot's ids, retrying transient failures until ctx
// ends.
func (b *Bridge) authTest(ctx context.Context) (identity, error) {
	delay := b.reconnectMin
	for {
		resp, err := b.api.AuthTestContext(ctx)
		if err == nil {
			return identity{userID: resp.UserID, botID: resp.BotID}, nil
		}
		if isFatal(err) {
			return identity{}, fmt.Errorf("slack bot %q: auth.test: %s: %w", b.name, b.redact.Err(err), ErrFatal)
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
// error. socketmode reconnects by itself after disconnects and dropped
// sockets; this loop restarts it when it gives up.
func (b *Bridge) runSocket(ctx context.Context, sm *socketmode.Client) error {
	delay := b.reconnectMin
	for {
		started := time.Now()
		err := sm.RunContext(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if isFatal(err) {
			return fmt.Errorf("slack bot %q: socket mode: %s: %w", b.name, b.redact.Err(err), ErrFatal)
		}
		if time.Since(started) > 2*b.reconnectMax {
			delay = b.reconnectMin
		}
		b.log.Warn("slack socket mode stopped, restarting", slog.String("err", b.redact.Err(err)), slog.Duration("retry_in", delay))
		if !sleep(ctx, delay) {
			return nil
		}
		delay = min(delay*2, b.reconnectMax)
	}
}

func isFatal(err error) bool {
	if err == nil {
		return false
	}
	if se, ok := errors.AsType[slackapi.SlackErrorResponse](err); ok {
		return fatalCode(se.Err)
	}
	if sc, ok := errors.AsType[slackapi.StatusCodeError](err); ok {
		return sc.Code == 401 || sc.Code == 403 || sc.Code == 404
	}
	return fatalCode(err.Error())
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

// handleEvent deals with one socketmode event. It runs on Run's
// goroutine, so envelopes are handled in arrival order.
func (b *Bridge) handleEvent(ctx context.Context, sm *socketmode.Client, h bridges.Handler, ev socketmode.Event) {
	switch ev.Type {
	case socketmode.EventTypeConnecting:
		b.log.Debug("slack socket connecting")
	case socketmode.EventTypeConnected:
		n := 0
		if c, ok := ev.Data.(*socketmode.ConnectedEvent); ok {
			n = c.ConnectionCount
		}
		b.log.Info("slack socket connected", slog.Int("connection", n))
	case socketmode.EventTypeConnectionError:
		msg := ""
		if c, ok := ev.Data.(*slackapi.ConnectionErrorEvent); ok {
			msg = b.redact.Err(c.ErrorObj)
		}
		b.log.Warn("slack socket connection failed", slog.String("err", msg))
	case socketmode.EventTypeInvalidAuth:
		b.log.Error("slack rejected the app token")
	case socketmode.EventTypeHello:
		b.log.Debug("slack socket hello")
	case socketmode.EventTypeIncomingError:
		msg := ""
		if c, ok := ev.Data.(*slackapi.IncomingEventError); ok {
			msg = b.redact.Err(c.ErrorObj)
		}
		b.log.Warn("slack socket read failed", slog.String("err", msg))
	case socketmode.EventTypeErrorWriteFailed:
		b.log.Warn("slack socket write failed; Slack will resend unacknowledged events")
	case socketmode.EventTypeErrorBadMessage:
		b.badMessage(ctx, sm, ev)
	case socketmode.EventTypeEventsAPI:
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
		b.log.Warn("slack message not accepted; leaving it for Slack to resend",
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
