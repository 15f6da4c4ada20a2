package whatsapp

import (
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
// ends the session for good (an error wrapping ErrDisconnected that says
// what to do). whatsmeow reconnects by itself after network errors.
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
			return fmt.Errorf("whatsapp bot %s: %w: the device was deleted (logged out): link it again with `bridge whatsapp-link -bot %s -relink`", b.bot, ErrDisconnected, b.bot)
		}
		if attempt >= maxConnectAttempts {
			return fmt.Errorf("whatsapp bot %s: connect: gave up after %d attempts: %w", b.bot, attempt, err)
		}
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
		if n := errorsSoFar(); n >= maxReconnects {
			b.fail(b.fatal, fmt.Errorf("whatsapp bot %s: %w: gave up reconnecting after %d attempts: %w", b.bot, ErrDisconnected, n, err))
			return false
		}
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
		go b.lookUpPhones(ctx) // not on the event loop: it waits for an answer
	case *events.LoggedOut:
		b.fail(fatal, fmt.Errorf("whatsapp bot %s: %w: logged out (reason %v): link it again with `bridge whatsapp-link -bot %s -relink`", b.bot, ErrDisconnected, e.Reason, b.bot))
	case *events.StreamReplaced:
		b.fail(fatal, fmt.Errorf("whatsapp bot %s: %w: another client uses this device: stop it, or link again", b.bot, ErrDisconnected))
	case *events.TemporaryBan:
		b.fail(fatal, fmt.Errorf("whatsapp bot %s: %w: temporarily banned (%v): wait until the ban ends", b.bot, ErrDisconnected, e))
	case *events.ClientOutdated:
		b.fail(fatal, fmt.Errorf("whatsapp bot %s: %w: WhatsApp refuses this client version: upgrade the bridge", b.bot, ErrDisconnected))
	case *events.ConnectFailure:
		b.fail(fatal, fmt.Errorf("whatsapp bot %s: %w: connect failure %v", b.bot, ErrDisconnected, e.Reason))
	}
	return true
}

func (b *Bridge) fail(fatal chan<- error, err error) {
	b.log.Error("whatsapp session ended", "err", err)
	select {
	case fatal <- err:
	default:
	}
}

// handler is the core given to Run (nil before).
func (b *Bridge) handler() bridges.Handler {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.h
}
