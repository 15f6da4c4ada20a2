package egress

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// recorder keeps a proxy's events, lookups and dials.
type recorder struct {
	mu      sync.Mutex
	events  []Event
	lookups []string
	dials   []netip.AddrPort
}

func (r *recorder) observe(ev Event) {
	r.mu.Lock()
	r.events = append(r.events, ev)
	r.mu.Unlock()
}

func (r *recorder) snapshot() ([]Event, []string, []netip.AddrPort) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Event(nil), r.events...), append([]string(nil), r.lookups...), append([]netip.AddrPort(nil), r.dials...)
}

// testGate starts a proxy (testProxy) and serves a gate of it on a Unix
// socket. It returns the gate and its socket.
func testGate(t *testing.T, cfg Config, pol *Policy, names map[string][]netip.Addr, fakes map[netip.AddrPort]http.Handler) (*Gate, string, *recorder) {
	t.Helper()
	p, rec := testProxy(t, cfg, names, fakes)
	sock := filepath.Join(t.TempDir(), "p.sock")
	g, err := attachUnix(p, sock, pol, "prof", "sess")
	if err != nil {
		t.Fatal(err)
	}
	return g, sock, rec
}

// testProxy starts a proxy whose lookups come from names and whose dials
// go to the real loopback, except addresses in fakes (served in memory:
// no test sends a packet off the machine).
func testProxy(t *testing.T, cfg Config, names map[string][]netip.Addr, fakes map[netip.AddrPort]http.Handler) (*Proxy, *recorder) {
	t.Helper()
	rec := &recorder{}
	cfg.Observe = rec.observe
	cfg.Resolve = func(_ context.Context, host string) ([]netip.Addr, error) {
		rec.mu.Lock()
		rec.lookups = append(rec.lookups, host)
		rec.mu.Unlock()
		if a, ok := names[host]; ok {
			return a, nil
		}
		return nil, errors.New("no such host")
	}
	cfg.Dial = func(ctx context.Context, addr netip.AddrPort) (net.Conn, error) {
		rec.mu.Lock()
		rec.dials = append(rec.dials, addr)
		rec.mu.Unlock()
		if h, ok := fakes[addr]; ok {
			c, s := net.Pipe()
			go func() { _ = http.Serve(&oneConnListener{c: s}, h) }()
			return c, nil
		}
		if !addr.Addr().IsLoopback() {
			return nil, fmt.Errorf("test: refusing to dial %s off the machine", addr)
		}
		var d net.Dialer
		return d.DialContext(ctx, "tcp", addr.String())
	}
	p := New(cfg)
	t.Cleanup(p.Close)
	return p, rec
}

// oneConnListener serves one in-memory connection.
type oneConnListener struct {
	mu sync.Mutex
	c  net.Conn
}

func (l *oneConnListener) Accept() (net.Conn, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.c == nil {
		return nil, io.EOF
	}
	c := l.c
	l.c = nil
	return c, nil
}
func (l *oneConnListener) Close() error   { return nil }
func (l *oneConnListener) Addr() net.Addr { return &net.UnixAddr{Name: "mem", Net: "unix"} }

// connect sends CONNECT target on a new connection to sock and returns the
// connection and the status line.
func connect(t *testing.T, sock, target string) (net.Conn, *bufio.Reader, string) {
	t.Helper()
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil {
		t.Fatalf("CONNECT %s: %v", target, err)
	}
	return c, br, resp.Status
}

// viaProxy is an HTTP client that uses the gate at sock as its proxy.
func viaProxy(sock string) *http.Client {
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		Proxy: func(*http.Request) (*url.URL, error) { return url.Parse("http://proxy.invalid") },
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", sock)
		},
	}}
}

func echoServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); _, _ = io.Copy(c, c) }()
		}
	}()
	return ln.Addr().String()
}

// TestProxyConnect: CONNECT to a listed loopback service tunnels bytes
// both ways, including those sent right behind the request.
func TestProxyConnect(t *testing.T) {
	echo := echoServer(t)
	pol, err := NewPolicy(Endpoint{"api.anthropic.com", 443}, []string{echo}, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, sock, rec := testGate(t, Config{}, pol, nil, nil)
	c, br, status := connect(t, sock, echo)
	if !strings.HasPrefix(status, "200") {
		t.Fatalf("status %q", status)
	}
	fmt.Fprint(c, "hello\n")
	line, err := br.ReadString('\n')
	if err != nil || line != "hello\n" {
		t.Fatalf("echo: %q, %v", line, err)
	}
	// Early data: the request and the first bytes in one write.
	c2, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	fmt.Fprintf(c2, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\nearly\n", echo, echo)
	br2 := bufio.NewReader(c2)
	if _, err := http.ReadResponse(br2, &http.Request{Method: http.MethodConnect}); err != nil {
		t.Fatal(err)
	}
	if line, err := br2.ReadString('\n'); err != nil || line != "early\n" {
		t.Fatalf("early data: %q, %v", line, err)
	}
	evs, _, dials := rec.snapshot()
	if len(evs) != 2 || !evs[0].Allow || evs[0].Reason != ReasonAllowList || evs[0].Profile != "prof" || evs[0].Session != "sess" {
		t.Errorf("events: %+v", evs)
	}
	if len(dials) != 2 || dials[0].String() != echo {
		t.Errorf("dials: %v", dials)
	}
}

// TestProxyPlainHTTP: an absolute-URI request is forwarded (streamed), and
// the model endpoint on loopback is allowed without any list.
func TestProxyPlainHTTP(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "data: %s %s proxy-auth=%q\n\n", r.Method, r.URL.Path, r.Header.Get("Proxy-Authorization"))
	}))
	defer srv.Close()
	model, err := ModelEndpoint(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	pol, _ := NewPolicy(model, nil, nil)
	_, sock, rec := testGate(t, Config{}, pol, nil, nil)
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/messages?beta=true", strings.NewReader("{}"))
	req.Header.Set("Proxy-Authorization", "Basic c2VjcmV0")
	resp, err := viaProxy(sock).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "data: POST /v1/messages proxy-auth=\"\"\n\n" {
		t.Fatalf("got %d %q", resp.StatusCode, body)
	}
	evs, _, _ := rec.snapshot()
	if len(evs) != 1 || !evs[0].Allow || evs[0].Reason != ReasonModel || evs[0].Method != "POST" {
		t.Errorf("events: %+v", evs)
	}
	// Only CONNECT and absolute http:// requests are served: an origin-form
	// request, or https:// in absolute form (clients tunnel TLS), is not.
	for _, line := range []string{"GET /relative HTTP/1.1", "GET https://" + model.String() + "/ HTTP/1.1"} {
		c, err := net.Dial("unix", sock)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(c, "%s\r\nHost: x\r\n\r\n", line)
		r2, err := http.ReadResponse(bufio.NewReader(c), nil)
		c.Close()
		if err != nil || r2.StatusCode != http.StatusBadRequest {
			t.Errorf("%s: %v %v", line, r2, err)
		}
	}
	if evs, _, _ := rec.snapshot(); len(evs) != 3 || evs[2].Reason != ReasonBadRequest {
		t.Errorf("events: %+v", evs)
	}
}

// TestProxyRefusesBeforeDialing: metadata, private, link-local and
// unlisted loopback targets are refused from the address (or the name)
// alone: nothing is dialed, and a metadata name is not even looked up.
func TestProxyRefusesBeforeDialing(t *testing.T) {
	echo := echoServer(t) // a real loopback service, not listed
	pol, _ := NewPolicy(Endpoint{"api.anthropic.com", 443}, nil, []string{"blocked.example"})
	names := map[string][]netip.Addr{
		"internal.example": {netip.MustParseAddr("10.0.0.7")},
		"loop.example":     {netip.MustParseAddr("127.0.0.1")},
		"meta.example":     {netip.MustParseAddr("169.254.169.254")},
		"v6meta.example":   {netip.MustParseAddr("fd00:ec2::254")},
		"blocked.example":  {netip.MustParseAddr("93.184.215.14")},
	}
	_, sock, rec := testGate(t, Config{}, pol, names, nil)
	_, echoPort, _ := net.SplitHostPort(echo)
	for _, tt := range []struct{ target, reason string }{
		{"169.254.169.254:80", ReasonMetadata},
		{"[fd00:ec2::254]:80", ReasonMetadata},
		{"metadata.google.internal:80", ReasonMetadata},
		{"meta.example:80", ReasonMetadata},
		{"v6meta.example:80", ReasonMetadata},
		{"10.0.0.7:443", ReasonPrivate},
		{"192.168.1.1:80", ReasonPrivate},
		{"internal.example:443", ReasonPrivate},
		{"169.254.10.10:80", ReasonLinkLocal},
		{echo, ReasonLoopback},
		{"localhost:" + echoPort, ReasonUnresolved}, // the test's resolver does not know it
		{"loop.example:" + echoPort, ReasonLoopback},
		{"[::1]:" + echoPort, ReasonLoopback},
		{"[::ffff:127.0.0.1]:" + echoPort, ReasonLoopback},
		{"LOOP.example.:" + echoPort, ReasonLoopback},
		{"[::ffff:169.254.169.254]:80", ReasonMetadata},
		{"0.0.0.0:" + echoPort, ReasonReserved},
		{"blocked.example:443", ReasonDenyList},
		{"nosuch.example:443", ReasonUnresolved},
	} {
		_, _, status := connect(t, sock, tt.target)
		if strings.HasPrefix(status, "200") {
			t.Errorf("CONNECT %s: %s", tt.target, status)
		}
		evs, _, _ := rec.snapshot()
		if ev := evs[len(evs)-1]; ev.Allow || ev.Reason != tt.reason {
			t.Errorf("CONNECT %s: event %+v, want reason %s", tt.target, ev, tt.reason)
		}
		// Plain HTTP likewise.
		resp, err := viaProxy(sock).Get("http://" + tt.target + "/")
		if err != nil {
			t.Fatalf("GET %s: %v", tt.target, err)
		}
		resp.Body.Close()
		if resp.StatusCode == 200 {
			t.Errorf("GET %s: %d", tt.target, resp.StatusCode)
		}
	}
	_, lookups, dials := rec.snapshot()
	if len(dials) != 0 {
		t.Errorf("the proxy dialed refused targets: %v", dials)
	}
	for _, l := range lookups {
		if l == "metadata.google.internal" || l == "blocked.example" {
			t.Errorf("looked up %s, refused by name", l)
		}
	}
}

// TestProxyDialsWhatItJudged: a name is looked up once per request and
// the address judged is the address dialed: a name whose answer changes
// (DNS rebinding) never reaches a refused address, and a mixed answer is
// dialed at its allowed address only.
func TestProxyDialsWhatItJudged(t *testing.T) {
	public := netip.MustParseAddr("93.184.215.14")
	fakePublic := map[netip.AddrPort]http.Handler{
		netip.AddrPortFrom(public, 80): http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "public") }),
	}
	echo := echoServer(t)
	_, echoPort, _ := net.SplitHostPort(echo)
	pol, _ := NewPolicy(Endpoint{"api.anthropic.com", 443}, nil, nil)
	var mu sync.Mutex
	n := 0
	cfg := Config{}
	g, sock, rec := testGate(t, cfg, pol, nil, fakePublic)
	// Replace the resolver with one that answers public, then loopback.
	g.p.cfg.Resolve = func(_ context.Context, host string) ([]netip.Addr, error) {
		mu.Lock()
		defer mu.Unlock()
		n++
		switch host {
		case "rebind.example":
			if n%2 == 1 {
				return []netip.Addr{public}, nil
			}
			return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
		case "mixed.example":
			return []netip.Addr{netip.MustParseAddr("127.0.0.1"), public}, nil
		}
		return nil, errors.New("no such host")
	}
	client := viaProxy(sock)
	for i := 0; i < 4; i++ {
		resp, err := client.Get("http://rebind.example/")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == 200 && string(body) != "public" {
			t.Fatalf("request %d reached %q", i, body)
		}
	}
	resp, err := client.Get("http://mixed.example/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "public" {
		t.Fatalf("mixed answer: %d %q", resp.StatusCode, body)
	}
	_, _, status := connect(t, sock, "mixed.example:"+echoPort)
	if strings.HasPrefix(status, "200") {
		t.Fatalf("mixed answer on the loopback service's port: %s", status) // public:port is not faked: refused to dial
	}
	evs, _, dials := rec.snapshot()
	var judged []netip.AddrPort
	for _, ev := range evs {
		if ev.Allow {
			judged = append(judged, ev.Addr)
		}
	}
	for _, d := range dials {
		if d.Addr() != public {
			t.Errorf("dialed %s", d)
		}
	}
	// Plain requests to one judged address share a kept-alive connection:
	// no more dials than allowed decisions, each to an address judged.
	if len(dials) == 0 || len(dials) > len(judged) {
		t.Errorf("dials %v, allowed decisions %v", dials, judged)
	}
	for _, d := range dials {
		if !slices.Contains(judged, d) {
			t.Errorf("dialed %s, judged none such: %v", d, judged)
		}
	}
	refused := 0
	for _, ev := range evs {
		if !ev.Allow && ev.Reason == ReasonLoopback {
			refused++
		}
	}
	if refused != 2 {
		t.Errorf("want the two loopback answers of rebind.example refused, events %+v", evs)
	}
}
