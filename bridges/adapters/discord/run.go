package discord

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/bwmarrin/discordgo"
	"github.com/gorilla/websocket"
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
	if err := b.markRunning(runCtx); err != nil {
		return err
	}

	// Messages go through one ordered queue and worker. The worker uses a
	// context that outlives ctx so that what the gateway already delivered
	// is still handed to the core during shutdown (Discord will not send
	// it again).
	deliverCtx := context.WithoutCancel(ctx)
	q := newInbox(b.queueSize)
	disconnected := make(chan struct{}, 1)
	removers := b.addHandlers(deliverCtx, h, q, disconnected)
	go b.work(deliverCtx, h, q)

	conn := bridges.NewConnReporter(h)
	conn.Starting()
	err := b.connectGated(runCtx, h, disconnected, conn)

	b.shutdown(q, removers, cancel)
	if err != nil {
		b.log.Error("discord gateway stopped", "err", err)
	}
	return err
}

// markRunning records that Run runs with runCtx (the context of the
// typing renewals), or fails with ErrAlreadyRunning.
func (b *Bridge) markRunning(runCtx context.Context) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.running {
		return fmt.Errorf("discord bot %q: %w", b.name, ErrAlreadyRunning)
	}
	b.running, b.runCtx = true, runCtx
	return nil
}

// inbox is Run's ordered message queue: the MESSAGE_CREATE handler puts
// messages in msgs, one worker (work) hands them to the core.
type inbox struct {
	msgs chan *discordgo.Message
	stop chan struct{} // closed by shutdown: hand over what is queued, then end
	done chan struct{} // closed by the worker when it has ended
}

func newInbox(size int) *inbox {
	return &inbox{msgs: make(chan *discordgo.Message, size), stop: make(chan struct{}), done: make(chan struct{})}
}

// addHandlers subscribes Run to the gateway events: READY, messages (into
// q), clicks (each on its own goroutine, see goInteraction), new threads
// (for the channel cache) and disconnects (a signal on disconnected). It
// returns the functions that remove the handlers again.
func (b *Bridge) addHandlers(deliverCtx context.Context, h bridges.Handler, q *inbox, disconnected chan<- struct{}) []func() {
	s := b.session
	return []func(){
		s.AddHandler(func(_ *discordgo.Session, r *discordgo.Ready) { b.onReady(r) }),
		s.AddHandler(func(_ *discordgo.Session, m *discordgo.MessageCreate) {
			select {
			case q.msgs <- m.Message:
			case <-q.done:
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
}

// work is the message worker: it hands q's messages to the core one at a
// time, in gateway order, until q.stop is closed; then it hands over what
// is still queued and closes q.done. Run starts it and waits for it.
func (b *Bridge) work(ctx context.Context, h bridges.Handler, q *inbox) {
	defer close(q.done)
	for {
		select {
		case m := <-q.msgs:
			b.handleMessage(ctx, h, m, q.stop)
		case <-q.stop:
			for {
				select {
				case m := <-q.msgs:
					b.handleMessage(ctx, h, m, q.stop)
				default:
					return
				}
			}
		}
	}
}

// shutdown ends a Run: it closes the gateway (no more events), lets the
// worker hand over what is queued, removes the event handlers, cancels
// the run's context (cancel) and then stops and waits for every goroutine
// the handlers started (typing renewals, clicks).
func (b *Bridge) shutdown(q *inbox, removers []func(), cancel context.CancelFunc) {
	if cerr := b.session.Close(); cerr != nil {
		b.log.Debug("close gateway", "err", cerr)
	}
	close(q.stop)
	<-q.done
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

// SetConnGate implements bridges.ConnGated: with a gate (replicas), Run
// holds the gateway connection only while the gate lets it — one replica
// per bot, as Discord sends every event to every session of a token — and
// stands by otherwise. Call it before Run.
func (b *Bridge) SetConnGate(g bridges.ConnGate) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.gate = g
}

// connectGated is connectLoop, through the gate when there is one: each
// time the gate lets this replica connect, connectLoop runs until the gate
// takes the right away, and then the gateway is closed at once (close
// code 1000, which ends the session at Discord) so that the next holder
// is the only one connected.
func (b *Bridge) connectGated(ctx context.Context, h bridges.Handler, disconnected <-chan struct{}, conn *bridges.ConnReporter) error {
	b.mu.Lock()
	g := b.gate
	b.mu.Unlock()
	if g == nil {
		return b.connectLoop(ctx, disconnected, conn)
	}
	return g.Hold(ctx, h, func(ctx context.Context) error {
		conn.Starting()
		err := b.connectLoop(ctx, disconnected, conn)
		if cerr := b.session.Close(); cerr != nil {
			b.log.Debug("close gateway", "err", cerr)
		}
		return err
	})
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

// discordgo reconnects on its own and never reports the close code the
// gateway sent: a 4014 (disallowed intent) or 4004 (bad token) that
// arrives after the handshake would turn into an endless, silent
// reconnect loop. gatewayDialer therefore wraps the gateway's network
// connection and watches the server→client websocket frames for close
// frames, recording their code. It only observes bytes; it never changes
// them.
//
// It also keeps the current connection so that Run can abort a
// handshake that hangs (discordgo's Open has no context).
type gatewayDialer struct {
	lastClose atomic.Int32 // close code the server sent on the latest connection; 0 = none

	mu  sync.Mutex
	cur net.Conn
}

// dialer returns the websocket dialer for discordgo. When the gateway is
// reached through an HTTP proxy (HTTPS_PROXY), the proxy dialer of
// gorilla/websocket is kept and close codes are only seen at handshake
// time (Open's error).
func (g *gatewayDialer) dialer(proxied bool) *websocket.Dialer {
	d := &websocket.Dialer{HandshakeTimeout: 30 * time.Second}
	if proxied {
		d.Proxy = http.ProxyFromEnvironment
		return d
	}
	d.NetDialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		var nd net.Dialer
		c, err := nd.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return g.track(c), nil
	}
	d.NetDialTLSContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		td := tls.Dialer{Config: &tls.Config{MinVersion: tls.VersionTLS12}}
		c, err := td.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return g.track(c), nil
	}
	return d
}

func (g *gatewayDialer) track(c net.Conn) net.Conn {
	g.lastClose.Store(0)
	sc := &sniffConn{Conn: c}
	sc.p.onClose = func(code int) { g.lastClose.Store(int32(code)) }
	g.mu.Lock()
	g.cur = sc
	g.mu.Unlock()
	return sc
}

// abort closes the current gateway connection (unblocking a hung Open).
func (g *gatewayDialer) abort() {
	g.mu.Lock()
	c := g.cur
	g.mu.Unlock()
	if c != nil {
		_ = c.Close()
	}
}

// sniffConn passes reads through a frameParser.
type sniffConn struct {
	net.Conn
	mu sync.Mutex
	p  frameParser
}

func (c *sniffConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 {
		c.mu.Lock()
		c.p.feed(b[:n])
		c.mu.Unlock()
	}
	return n, err
}

// frameParser follows a client-side websocket byte stream: first the HTTP
// upgrade response, then frames (RFC 6455 §5.2). For each close frame
// (opcode 8) it calls onClose with the status code (1005 when the frame
// has none). It stops at the first inconsistency.
type frameParser struct {
	onClose func(code int)

	afterHTTP bool // the upgrade response has been consumed
	crlf      int  // progress through "\r\n\r\n"

	hdr      []byte // the frame header read so far
	left     uint64 // payload bytes still to skip
	masked   bool   // the payload is masked with key (client frames; servers do not mask)
	key      [4]byte
	isClose  bool
	closeBuf []byte // the first two payload bytes of a close frame
	broken   bool
}

func (p *frameParser) feed(b []byte) {
	for len(b) > 0 && !p.broken {
		if !p.afterHTTP {
			c := b[0]
			b = b[1:]
			want := "\r\n\r\n"[p.crlf]
			switch {
			case c == want:
				p.crlf++
			case c == '\r':
				p.crlf = 1
			default:
				p.crlf = 0
			}
			if p.crlf == 4 {
				p.afterHTTP = true
			}
			continue
		}
		if p.left > 0 {
			n := uint64(len(b))
			if n > p.left {
				n = p.left
			}
			if p.isClose && len(p.closeBuf) < 2 {
				k := min(int(n), 2-len(p.closeBuf))
				for _, c := range b[:k] {
					if p.masked {
						c ^= p.key[len(p.closeBuf)]
					}
					p.closeBuf = append(p.closeBuf, c)
				}
			}
			b = b[n:]
			p.left -= n
			if p.left == 0 {
				p.endFrame()
			}
			continue
		}
		p.hdr = append(p.hdr, b[0])
		b = b[1:]
		need, ok := headerLen(p.hdr)
		if !ok || len(p.hdr) < need {
			continue
		}
		p.startFrame()
	}
}

// headerLen returns the full header length once the first two bytes are
// known.
func headerLen(h []byte) (int, bool) {
	if len(h) < 2 {
		return 2, false
	}
	n := 2
	switch h[1] & 0x7f {
	case 126:
		n += 2
	case 127:
		n += 8
	}
	if h[1]&0x80 != 0 {
		n += 4
	}
	return n, true
}

func (p *frameParser) startFrame() {
	h := p.hdr
	length := uint64(h[1] & 0x7f)
	switch length {
	case 126:
		length = uint64(h[2])<<8 | uint64(h[3])
	case 127:
		length = 0
		for _, c := range h[2:10] {
			length = length<<8 | uint64(c)
		}
		if length>>63 != 0 {
			p.broken = true
			return
		}
	}
	p.masked = h[1]&0x80 != 0
	if p.masked {
		copy(p.key[:], h[len(h)-4:])
	}
	p.isClose = h[0]&0x0f == websocket.CloseMessage
	if p.isClose && length > 125 { // control frames are short
		p.broken = true
		return
	}
	p.hdr = p.hdr[:0]
	p.closeBuf = p.closeBuf[:0]
	p.left = length
	if length == 0 {
		p.endFrame()
	}
}

func (p *frameParser) endFrame() {
	if p.isClose && p.onClose != nil {
		code := websocket.CloseNoStatusReceived
		if len(p.closeBuf) == 2 {
			code = int(p.closeBuf[0])<<8 | int(p.closeBuf[1])
		}
		p.onClose(code)
	}
	p.isClose = false
}
