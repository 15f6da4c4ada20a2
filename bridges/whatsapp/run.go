package whatsapp

import (
	"context"
	"fmt"
	"runtime/debug"

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
	fatal := make(chan error, 1)
	id := b.cli.AddEventHandlerWithSuccessStatus(func(evt any) bool {
		return b.handleEvent(ctx, evt, fatal)
	})
	defer b.cli.RemoveEventHandler(id)
	if !b.cli.IsConnected() {
		if err := b.cli.Connect(); err != nil {
			return fmt.Errorf("whatsapp bot %s: connect: %w", b.bot, err)
		}
	}
	defer b.cli.Disconnect()
	defer b.stopTyping()
	select {
	case <-ctx.Done():
		return nil
	case err := <-fatal:
		return err
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
