package discord

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/bwmarrin/discordgo"
)

// Run implements bridges.Platform: it connects to the gateway, reconnects
// (resuming the session) whenever the connection ends, and delivers
// messages and clicks to h until ctx ends. The connection state goes to
// bridges.ReportState: starting, connected (after READY or RESUMED),
// reconnecting (with the count of failed attempts and the last error).
// Transient failures (network errors, DNS, 5xx from GET /gateway, refused
// handshakes, dropped connections) are retried forever, at start-up too,
// with b.reconnect's capped back-off and jitter. Run returns nil when ctx
// ends, and a *bridges.Failure saying what to do only when Discord
// refuses the bot for good (wrapping ErrAuthentication,
// ErrDisallowedIntent or ErrGatewayFatal). Only one Run may be active at
// a time (ErrAlreadyRunning).
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

	conn := bridges.NewConnReporter(h)
	conn.Starting()
	err := b.connectLoop(runCtx, disconnected, conn)

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
// disconnect until ctx ends (nil) or Discord refuses the bot for good (a
// *bridges.Failure, wrapped with the bot's name). It never gives up on a
// transient failure: it waits b.reconnect.Delay between failed attempts.
// It reports the connection state through conn.
func (b *Bridge) connectLoop(ctx context.Context, disconnected <-chan struct{}, conn *bridges.ConnReporter) error {
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
				b.log.Info("discord gateway reconnected", "attempts", conn.Failures()+1)
			}
			first = false
			conn.Connected()
			select {
			case <-ctx.Done():
				return nil
			case <-disconnected:
			}
			code := int(b.gateway.lastClose.Load())
			if f := closeFailure(code); f != nil {
				return fmt.Errorf("discord bot %q: %w", b.name, f)
			}
			reason := "the gateway connection dropped"
			if code != 0 {
				reason = fmt.Sprintf("the gateway closed the connection (code %d)", code)
			}
			conn.Lost(reason)
			b.log.Warn("discord gateway disconnected; resuming", "close_code", code)
			continue
		}
		if f := openFailure(err); f != nil {
			return fmt.Errorf("discord bot %q: %w", b.name, f)
		}
		conn.Failed(err.Error())
		pause := b.reconnect.Delay(conn.Failures())
		b.log.Warn("discord gateway connect failed; retrying", "err", err, "attempt", conn.Failures(), "retry_in", pause)
		if !b.reconnect.Sleep(ctx, pause) {
			return nil
		}
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
