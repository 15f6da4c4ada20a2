package discord

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
)

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
