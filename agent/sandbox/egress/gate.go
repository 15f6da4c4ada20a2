package egress

import (
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Bounds of one gate's HTTP server.
const (
	gateReadHeaderTimeout = 30 * time.Second
	gateIdleTimeout       = 2 * time.Minute
	gateMaxHeaderBytes    = 64 << 10
	gateMaxResponseHeader = 1 << 20
	relayBufferBytes      = 32 << 10
	gateMaxIdleUpstream   = 2 // idle kept-alive upstream connections per judged address
)

// Gate is one agent process's way out: its Unix socket and what it may
// reach. Safe for concurrent use.
type Gate struct {
	p                *Proxy
	pol              *Policy
	profile, session string
	srv              *http.Server
	rp               *httputil.ReverseProxy
	transport        *http.Transport // rp's: pooled upstream connections of plain HTTP requests
	served           chan struct{}

	mu      sync.Mutex
	warm    netip.AddrPort        // the warm-up stand-in while admitted (AdmitWarmUp)
	tunnels map[net.Conn]struct{} // hijacked CONNECT connections, closed by Close
	closed  bool
	wg      sync.WaitGroup // tunnels
}

// addrKey carries the judged address of a plain HTTP request to the dialer.
type addrKey struct{}

func newGate(p *Proxy, ln net.Listener, pol *Policy, profile, session string) *Gate {
	g := &Gate{p: p, pol: pol, profile: profile, session: session, served: make(chan struct{}),
		tunnels: map[net.Conn]struct{}{}}
	// Upstream connections are kept alive between the requests of this
	// agent alone (one transport per gate), pooled by the address judged
	// for the request: Rewrite puts that address in the outgoing URL (the
	// Host header keeps the name the agent asked for), so a request reuses
	// only a connection dialed to exactly the address it was judged to,
	// and every request is judged first (a refused one never reaches the
	// pool). A model turn's request then costs no dial and no close.
	transport := &http.Transport{
		Proxy: nil,
		DialContext: func(ctx context.Context, _, hostport string) (net.Conn, error) {
			addr, ok := ctx.Value(addrKey{}).(netip.AddrPort)
			if !ok || hostport != addr.String() {
				return nil, fmt.Errorf("egress: dial %s: not the judged address", hostport) // cannot happen: ServeHTTP and Rewrite set both
			}
			return p.dial(ctx, addr)
		},
		MaxIdleConnsPerHost:    gateMaxIdleUpstream,
		IdleConnTimeout:        min(gateIdleTimeout, p.cfg.IdleTimeout),
		DisableCompression:     true,
		MaxResponseHeaderBytes: gateMaxResponseHeader,
		ResponseHeaderTimeout:  p.cfg.IdleTimeout,
	}
	g.transport = transport
	g.rp = &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.Host = pr.In.Host
			if addr, ok := pr.In.Context().Value(addrKey{}).(netip.AddrPort); ok {
				pr.Out.URL.Host = addr.String() // the pool's key: the judged address
			}
		},
		Transport:     transport,
		FlushInterval: -1, // model replies stream
		ErrorLog:      log.New(io.Discard, "", 0),
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			p.log.Debug("egress: upstream failed", "profile", profile, "session", session, "host", r.Host, "err", err)
			http.Error(w, "agentbridge egress: upstream failed", http.StatusBadGateway)
		},
	}
	g.srv = &http.Server{
		Handler:           g,
		ReadHeaderTimeout: gateReadHeaderTimeout,
		IdleTimeout:       gateIdleTimeout,
		MaxHeaderBytes:    gateMaxHeaderBytes,
		ErrorLog:          log.New(io.Discard, "", 0),
	}
	lim := &limitListener{Listener: ln, max: int64(p.cfg.MaxConns), onBusy: func() {
		p.observe(Event{Profile: profile, Session: session, Allow: false, Reason: ReasonBusy})
	}}
	go func() {
		defer close(g.served)
		_ = g.srv.Serve(lim)
	}()
	return g
}

// AdmitWarmUp lets this agent reach addr (the bridge's warm-up stand-in)
// until revoke is called: during its warm-up turn, when it has run no
// command yet.
func (g *Gate) AdmitWarmUp(addr netip.AddrPort) (revoke func()) {
	g.mu.Lock()
	g.warm = netip.AddrPortFrom(addr.Addr().Unmap(), addr.Port())
	g.mu.Unlock()
	return func() {
		g.mu.Lock()
		g.warm = netip.AddrPort{}
		g.mu.Unlock()
	}
}

// Close stops the gate: its socket, its connections and tunnels. It waits
// for them to end.
func (g *Gate) Close() {
	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		<-g.served
		g.wg.Wait()
		return
	}
	g.closed = true
	for c := range g.tunnels {
		c.Close()
	}
	g.mu.Unlock()
	_ = g.srv.Close()
	<-g.served
	g.wg.Wait()
	g.transport.CloseIdleConnections()
	g.p.forget(g)
}

// ServeHTTP serves one proxy request: CONNECT host:port, or a plain HTTP
// request with an absolute http:// URL.
func (g *Gate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ev := Event{Profile: g.profile, Session: g.session, Method: r.Method}
	var hostport string
	switch {
	case r.Method == http.MethodConnect:
		hostport = r.Host
	case r.URL.IsAbs() && r.URL.Scheme == "http":
		hostport = r.URL.Host
		if r.URL.Port() == "" {
			hostport = net.JoinHostPort(r.URL.Hostname(), "80")
		}
	default:
		ev.Reason = ReasonBadRequest
		g.p.observe(ev)
		http.Error(w, "agentbridge egress: only CONNECT and absolute http:// requests are proxied", http.StatusBadRequest)
		return
	}
	host, port, err := splitHostPort(hostport)
	if err != nil {
		ev.Reason = ReasonBadRequest
		g.p.observe(ev)
		http.Error(w, "agentbridge egress: "+err.Error(), http.StatusBadRequest)
		return
	}
	ev.Host, ev.Port = host, port
	addr, v := g.decide(r.Context(), host, port)
	ev.Addr, ev.Allow, ev.Reason = addr, v.Allow, v.Reason
	g.p.observe(ev)
	if !v.Allow {
		code := http.StatusForbidden
		if v.Reason == ReasonUnresolved {
			code = http.StatusBadGateway
		}
		http.Error(w, fmt.Sprintf("agentbridge egress: %s refused (%s); see network.allow in the bridge's config", hostport, v.Reason), code)
		return
	}
	if r.Method == http.MethodConnect {
		g.connect(w, r, addr)
		return
	}
	// A proxy streams both ways at once. By default the HTTP/1 server
	// consumes and closes what the handler has not read of the request
	// body as soon as the response head is written; but the upstream may
	// answer while the transport still holds the body (the transport
	// always reads it once more after its last byte, to check its length).
	// Its next read then fails, it drops the upstream connection and the
	// reply is cut mid-stream (the client retries: a duplicate request).
	// Full duplex leaves the body to the transport.
	_ = http.NewResponseController(w).EnableFullDuplex()
	g.rp.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), addrKey{}, addr)))
	// What the transport left unread (an upstream that failed or answered
	// without reading it all) is then consumed here, as the server would
	// have: left to the server after the handler, its consuming races the
	// read of the connection's next request and the server panics
	// (golang/go#68560; ReverseProxy never closes the inbound body).
	_ = r.Body.Close()
	if g.isClosed() { // a request that ended after Close: its connection is not kept
		g.transport.CloseIdleConnections()
	}
}

// isClosed reports whether Close was called.
func (g *Gate) isClosed() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.closed
}

// splitHostPort splits and normalizes "host:port".
func splitHostPort(hostport string) (string, int, error) {
	h, p, err := net.SplitHostPort(hostport)
	if err != nil {
		return "", 0, fmt.Errorf("bad target %q: %w", hostport, err)
	}
	port, err := strconv.Atoi(p)
	if err != nil || port <= 0 || port > 65535 {
		return "", 0, fmt.Errorf("bad port in %q", hostport)
	}
	h = normalHost(h)
	if h == "" || strings.ContainsAny(h, "/ %") {
		return "", 0, fmt.Errorf("bad host in %q", hostport)
	}
	return h, port, nil
}

// decide judges host:port and returns the one address to dial: a refusal
// by name needs no lookup; otherwise each resolved address is judged and
// the first allowed one is chosen.
func (g *Gate) decide(ctx context.Context, host string, port int) (netip.AddrPort, Verdict) {
	if v := g.pol.DecideName(host, port); !v.Allow {
		return netip.AddrPort{}, v
	}
	var ips []netip.Addr
	if ip, err := netip.ParseAddr(host); err == nil {
		ips = []netip.Addr{ip}
	} else {
		rctx, cancel := context.WithTimeout(ctx, g.p.cfg.ResolveTimeout)
		ips, err = g.p.cfg.Resolve(rctx, host)
		cancel()
		if err != nil || len(ips) == 0 {
			return netip.AddrPort{}, Verdict{false, ReasonUnresolved}
		}
	}
	var refused Verdict
	var refusedAddr netip.AddrPort
	for i, ip := range ips {
		ip = ip.Unmap()
		addr := netip.AddrPortFrom(ip, uint16(port))
		v := g.judge(host, port, ip)
		if v.Allow {
			return addr, v
		}
		if i == 0 {
			refused, refusedAddr = v, addr
		}
	}
	return refusedAddr, refused
}

// judge decides one resolved address: the warm-up stand-in while admitted,
// else the policy.
func (g *Gate) judge(host string, port int, ip netip.Addr) Verdict {
	g.mu.Lock()
	warm := g.warm
	g.mu.Unlock()
	if warm.IsValid() && warm == netip.AddrPortFrom(ip, uint16(port)) {
		return Verdict{true, ReasonWarmUp}
	}
	return g.pol.Decide(host, port, ip, g.p.cfg.OwnAddrs)
}

// connect dials addr and relays the hijacked client connection to it.
func (g *Gate) connect(w http.ResponseWriter, r *http.Request, addr netip.AddrPort) {
	up, err := g.p.dial(r.Context(), addr)
	if err != nil {
		g.p.log.Debug("egress: dial failed", "profile", g.profile, "session", g.session, "addr", addr.String(), "err", err)
		http.Error(w, "agentbridge egress: connect failed", http.StatusBadGateway)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		up.Close()
		http.Error(w, "agentbridge egress: cannot tunnel", http.StatusInternalServerError)
		return
	}
	client, brw, err := hj.Hijack()
	if err != nil {
		up.Close()
		return
	}
	if !g.track(client, up) {
		client.Close()
		up.Close()
		return
	}
	defer g.untrack(client, up)
	client = idleConn(client, g.p.cfg.IdleTimeout)
	if _, err := io.WriteString(client, "HTTP/1.1 200 Connection Established\r\n\r\n"); err != nil {
		client.Close()
		up.Close()
		return
	}
	// Bytes the client sent after its request line (a TLS hello) first.
	if n := brw.Reader.Buffered(); n > 0 {
		early, _ := brw.Reader.Peek(n)
		if _, err := up.Write(early); err != nil {
			client.Close()
			up.Close()
			return
		}
	}
	relay(client, up)
}

// track registers a tunnel so that Close can end it; false when the gate
// is closed.
func (g *Gate) track(conns ...net.Conn) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return false
	}
	for _, c := range conns {
		g.tunnels[c] = struct{}{}
	}
	g.wg.Add(1)
	return true
}

func (g *Gate) untrack(conns ...net.Conn) {
	g.mu.Lock()
	for _, c := range conns {
		delete(g.tunnels, c)
	}
	g.mu.Unlock()
	g.wg.Done()
}

// relay copies both ways until both directions ended, then closes both.
// A direction that ends half-closes its destination where possible.
func relay(a, b net.Conn) {
	var wg sync.WaitGroup
	pipe := func(dst, src net.Conn) {
		defer wg.Done()
		buf := make([]byte, relayBufferBytes)
		_, err := io.CopyBuffer(dst, src, buf)
		if cw, ok := dst.(interface{ CloseWrite() error }); ok && err == nil {
			_ = cw.CloseWrite()
			return
		}
		dst.Close()
		src.Close()
	}
	wg.Add(2)
	go pipe(a, b)
	go pipe(b, a)
	wg.Wait()
	a.Close()
	b.Close()
}

// limitListener closes connections beyond max at once (the agent sees a
// reset, not a hang) and calls onBusy for each.
type limitListener struct {
	net.Listener
	max    int64
	active atomic.Int64
	onBusy func()
}

func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if l.active.Add(1) > l.max {
			l.active.Add(-1)
			c.Close()
			l.onBusy()
			continue
		}
		return &countedConn{Conn: c, release: func() { l.active.Add(-1) }}, nil
	}
}

// countedConn releases its slot once, at its first Close.
type countedConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *countedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}

func (c *countedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return c.Close()
}

// idleConn returns c with a deadline renewed by every read and write: a
// connection with no traffic either way for idle fails.
func idleConn(c net.Conn, idle time.Duration) net.Conn {
	_ = c.SetDeadline(time.Now().Add(idle))
	return &idleDeadlineConn{Conn: c, idle: idle}
}

type idleDeadlineConn struct {
	net.Conn
	idle time.Duration
}

func (c *idleDeadlineConn) Read(p []byte) (int, error) {
	_ = c.SetDeadline(time.Now().Add(c.idle))
	return c.Conn.Read(p)
}

func (c *idleDeadlineConn) Write(p []byte) (int, error) {
	_ = c.SetDeadline(time.Now().Add(c.idle))
	return c.Conn.Write(p)
}

func (c *idleDeadlineConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return c.Close()
}
