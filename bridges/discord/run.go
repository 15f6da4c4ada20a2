package discord

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/bwmarrin/discordgo"
	"github.com/gorilla/websocket"
)

// Run implements bridges.Platform: it connects to the gateway, reconnects
// (resuming the session) whenever the connection ends, and delivers
// messages and clicks to h until ctx ends. It returns nil when ctx ends
// and an error wrapping ErrAuthentication, ErrDisallowedIntent or
// ErrGatewayFatal when Discord refuses the bot for good. Only one Run may
// be active at a time (ErrAlreadyRunning).
func (b *Bridge) Run(ctx context.Context, h bridges.Handler) error {
	if h == nil {
		return errors.New("discord: Run needs a handler")
	}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	b.mu.Lock()
	if b.running {
		b.mu.Unlock()
		return fmt.Errorf("discord bot %q: %w", b.name, ErrAlreadyRunning)
	}
	b.running, b.runCtx = true, runCtx
	b.mu.Unlock()

	// Messages go through one ordered queue and worker. The worker uses a
	// context that outlives ctx so that what the gateway already delivered
	// is still handed to the core during shutdown (Discord will not send
	// it again).
	msgs := make(chan *discordgo.Message, b.queueSize)
	stop := make(chan struct{})
	workerDone := make(chan struct{})
	deliverCtx := context.WithoutCancel(ctx)
	disconnected := make(chan struct{}, 1)
	s := b.session
	removers := []func(){
		s.AddHandler(func(_ *discordgo.Session, r *discordgo.Ready) { b.onReady(r) }),
		s.AddHandler(func(_ *discordgo.Session, m *discordgo.MessageCreate) {
			select {
			case msgs <- m.Message:
			case <-workerDone:
			}
		}),
		s.AddHandler(func(_ *discordgo.Session, i *discordgo.InteractionCreate) {
			b.goInteraction(deliverCtx, h, i.Interaction)
		}),
		s.AddHandler(func(_ *discordgo.Session, t *discordgo.ThreadCreate) {
			if t.Channel != nil {
				b.chans.Add(t.ID, infoOf(t.Channel))
			}
		}),
		s.AddHandler(func(_ *discordgo.Session, _ *discordgo.Disconnect) {
			select {
			case disconnected <- struct{}{}:
			default:
			}
		}),
	}

	go func() {
		defer close(workerDone)
		for {
			select {
			case m := <-msgs:
				b.handleMessage(deliverCtx, h, m)
			case <-stop:
				for {
					select {
					case m := <-msgs:
						b.handleMessage(deliverCtx, h, m)
					default:
						return
					}
				}
			}
		}
	}()

	err := b.connectLoop(runCtx, disconnected)

	// Shut down: close the gateway (no more events), let the worker hand
	// over what is queued, then stop every goroutine the handlers started.
	if cerr := s.Close(); cerr != nil {
		b.log.Debug("close gateway", "err", cerr)
	}
	close(stop)
	<-workerDone
	for _, remove := range removers {
		remove()
	}
	cancel()
	b.mu.Lock()
	b.running, b.runCtx = false, nil
	for k, t := range b.typers {
		t.stop()
		delete(b.typers, k)
	}
	b.mu.Unlock()
	b.wg.Wait()
	b.gateway.abort()
	b.session.Client.CloseIdleConnections()
	if err != nil {
		b.log.Error("discord gateway stopped", "err", err)
	}
	return err
}

func (b *Bridge) onReady(r *discordgo.Ready) {
	if r.User == nil {
		return
	}
	b.mu.Lock()
	b.botID = r.User.ID
	b.mu.Unlock()
	attrs := []any{"user", r.User.Username, "user_id", r.User.ID}
	if r.Application != nil && r.Application.ID != "" {
		attrs = append(attrs, "invite_url", InviteURL(r.Application.ID))
	}
	b.log.Info("discord gateway ready", attrs...)
}

// connectLoop opens the gateway and reopens it (RESUME) after every
// disconnect until ctx ends or Discord refuses the bot for good.
func (b *Bridge) connectLoop(ctx context.Context, disconnected <-chan struct{}) error {
	pause := b.backoffMin
	first := true
	for {
		select {
		case <-disconnected: // stale signal from an earlier connection
		default:
		}
		err := b.open(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if err == nil || errors.Is(err, discordgo.ErrWSAlreadyOpen) {
			if !first {
				b.log.Info("discord gateway reconnected")
			}
			first = false
			pause = b.backoffMin
			select {
			case <-ctx.Done():
				return nil
			case <-disconnected:
			}
			if code := int(b.gateway.lastClose.Load()); fatalClose(code) != nil {
				return fmt.Errorf("discord bot %q: %w", b.name, fatalClose(code))
			}
			b.log.Warn("discord gateway disconnected; resuming", "close_code", b.gateway.lastClose.Load())
			continue
		}
		if ferr := fatalOpenError(err); ferr != nil {
			return fmt.Errorf("discord bot %q: %w", b.name, ferr)
		}
		b.log.Warn("discord gateway connect failed; retrying", "err", err, "retry_in", pause)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(pause):
		}
		pause = min(pause*2, b.backoffMax)
	}
}

// open runs discordgo's Open (handshake: HELLO, IDENTIFY or RESUME, READY
// or RESUMED), aborting it when ctx ends or the handshake hangs.
func (b *Bridge) open(ctx context.Context) error {
	b.gateway.lastClose.Store(0)
	done := make(chan struct{})
	defer close(done)
	go func() {
		t := time.NewTimer(b.openTimeout)
		defer t.Stop()
		select {
		case <-done:
		case <-ctx.Done():
			b.gateway.abort()
		case <-t.C:
			b.gateway.abort()
		}
	}()
	return b.session.Open()
}

// fatalOpenError classifies an Open error: non-nil when retrying cannot help.
func fatalOpenError(err error) error {
	var ce *websocket.CloseError
	if errors.As(err, &ce) {
		return fatalClose(ce.Code)
	}
	var re *discordgo.RESTError
	if errors.As(err, &re) && re.Response != nil && re.Response.StatusCode == http.StatusUnauthorized {
		return ErrAuthentication
	}
	if errors.Is(err, discordgo.ErrUnauthorized) {
		return ErrAuthentication
	}
	return nil
}

// fatalClose maps the gateway close codes Discord documents as "do not
// reconnect" to errors; nil for the others.
func fatalClose(code int) error {
	switch code {
	case 4004:
		return ErrAuthentication
	case 4014:
		return ErrDisallowedIntent
	case 4010:
		return fmt.Errorf("%w: 4010 invalid shard", ErrGatewayFatal)
	case 4011:
		return fmt.Errorf("%w: 4011 sharding required (the bot is in too many guilds for one shard)", ErrGatewayFatal)
	case 4012:
		return fmt.Errorf("%w: 4012 invalid API version", ErrGatewayFatal)
	case 4013:
		return fmt.Errorf("%w: 4013 invalid intents", ErrGatewayFatal)
	}
	return nil
}
