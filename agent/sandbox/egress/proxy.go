// Package egress is the bridge's egress proxy: the only way out of a
// sandbox that has its own network namespace (network mode "proxy").
//
// Each agent process gets its own Gate: a listener on which the Proxy
// serves HTTP proxy requests (CONNECT for TLS and any other TCP,
// absolute-URI requests for plain HTTP). In a sandbox it is a TCP listener
// on 127.0.0.1:ProxyPort inside the sandbox's own network namespace,
// opened there by the launcher (RunLauncher, the bridge binary itself,
// before it becomes the CLI) and handed over to the bridge (HandOff),
// which accepts and serves its connections in its own process; the
// agent's HTTPS_PROXY/HTTP_PROXY point there. Since the listener is the
// agent's own (nothing else can reach that namespace's loopback), the
// proxy knows who asks without trusting anything the agent says.
//
// Every request is judged by the profile's Policy from the address the
// name resolves to (and the host's own addresses, OwnAddrs), before any dial, and the proxy dials exactly the
// address it judged (a name that resolves elsewhere the second time, DNS
// rebinding, changes nothing). Each decision is logged and passed to
// Config.Observe (the bridge counts them in a metric).
package egress

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"time"
)

// Defaults of Config fields left zero.
const (
	DefaultDialTimeout    = 10 * time.Second
	DefaultResolveTimeout = 10 * time.Second
	DefaultIdleTimeout    = 10 * time.Minute
	DefaultMaxConns       = 64
)

// Config configures a Proxy.
type Config struct {
	Log *slog.Logger // nil = discard
	// Observe, when set, is called with every decision, from the
	// connection's goroutine (keep it quick).
	Observe func(Event)
	// Resolve looks a host name up; nil = the system resolver.
	Resolve func(ctx context.Context, host string) ([]netip.Addr, error)
	// OwnAddrs are the host's own interface addresses, refused like
	// loopback; nil = NewOwnAddrs(nil, 0, nil, Log): the interfaces,
	// read again when a second old.
	OwnAddrs *OwnAddrs
	// Dial connects to an address the policy allowed; nil = TCP.
	Dial func(ctx context.Context, addr netip.AddrPort) (net.Conn, error)
	// DialTimeout bounds a dial, ResolveTimeout a lookup; IdleTimeout
	// closes a tunnel or an upstream connection with no traffic either way
	// for that long. MaxConns caps one agent's open connections to its
	// gate; more are closed at once. Defaults above.
	DialTimeout, ResolveTimeout, IdleTimeout time.Duration
	MaxConns                                 int
}

// Event is one decision of the proxy.
type Event struct {
	Profile, Session string
	Method           string // CONNECT, GET, POST, …
	Host             string // as the agent named it
	Port             int
	Addr             netip.AddrPort // the address judged; invalid when refused before resolving
	Allow            bool
	Reason           string // one of the Reason constants
}

// Proxy serves the gates of every proxied agent. Create it with New; it is
// safe for concurrent use.
type Proxy struct {
	cfg Config
	log *slog.Logger

	mu     sync.Mutex
	gates  map[*Gate]struct{}
	closed bool
}

// New returns a proxy with cfg's zero fields defaulted.
func New(cfg Config) *Proxy {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Resolve == nil {
		cfg.Resolve = func(ctx context.Context, host string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		}
	}
	if cfg.OwnAddrs == nil {
		cfg.OwnAddrs = NewOwnAddrs(nil, 0, nil, cfg.Log)
	}
	if cfg.Dial == nil {
		cfg.Dial = func(ctx context.Context, addr netip.AddrPort) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "tcp", addr.String())
		}
	}
	if cfg.DialTimeout <= 0 {
		cfg.DialTimeout = DefaultDialTimeout
	}
	if cfg.ResolveTimeout <= 0 {
		cfg.ResolveTimeout = DefaultResolveTimeout
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = DefaultIdleTimeout
	}
	if cfg.MaxConns <= 0 {
		cfg.MaxConns = DefaultMaxConns
	}
	return &Proxy{cfg: cfg, log: cfg.Log, gates: map[*Gate]struct{}{}}
}

// Serve opens a gate for one agent process on ln, which only that process
// can reach (the listener a launcher handed over, see HandOff), served
// with policy pol; the gate owns ln from then on. profile and session name
// the agent in logs and events. Close the gate when the process has
// exited.
func (p *Proxy) Serve(ln net.Listener, pol *Policy, profile, session string) (*Gate, error) {
	if pol == nil {
		return nil, errors.New("egress: no policy")
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, errors.New("egress: proxy closed")
	}
	g := newGate(p, ln, pol, profile, session)
	p.gates[g] = struct{}{}
	return g, nil
}

// Close closes every gate and waits for their connections to end.
func (p *Proxy) Close() {
	p.mu.Lock()
	p.closed = true
	gates := make([]*Gate, 0, len(p.gates))
	for g := range p.gates {
		gates = append(gates, g)
	}
	p.mu.Unlock()
	for _, g := range gates {
		g.Close()
	}
}

// forget drops a closed gate.
func (p *Proxy) forget(g *Gate) {
	p.mu.Lock()
	delete(p.gates, g)
	p.mu.Unlock()
}

// dial connects to addr within the dial timeout; the connection closes
// itself after IdleTimeout without traffic.
func (p *Proxy) dial(ctx context.Context, addr netip.AddrPort) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, p.cfg.DialTimeout)
	defer cancel()
	c, err := p.cfg.Dial(ctx, addr)
	if err != nil {
		return nil, err
	}
	return idleConn(c, p.cfg.IdleTimeout), nil
}

// observe logs ev and passes it on.
func (p *Proxy) observe(ev Event) {
	level, msg := slog.LevelDebug, "egress allowed"
	if !ev.Allow {
		level, msg = slog.LevelInfo, "egress refused"
	}
	attrs := []any{"profile", ev.Profile, "session", ev.Session, "method", ev.Method, "host", ev.Host,
		"port", ev.Port, "reason", ev.Reason}
	if ev.Addr.IsValid() {
		attrs = append(attrs, "addr", ev.Addr.String())
	}
	p.log.Log(context.Background(), level, msg, attrs...)
	if p.cfg.Observe != nil {
		p.cfg.Observe(ev)
	}
}
