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
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/internal/testkit"
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

// TestProxyWarmUpAdmission: the warm-up stand-in is reachable only through
// the admitted gate and only until revoked.
func TestProxyWarmUpAdmission(t *testing.T) {
	stand := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "warm") }))
	defer stand.Close()
	addr := netip.MustParseAddrPort(strings.TrimPrefix(stand.URL, "http://"))
	pol, _ := NewPolicy(Endpoint{"api.anthropic.com", 443}, nil, nil)
	g, sock, rec := testGate(t, Config{}, pol, nil, nil)
	otherSock := filepath.Join(t.TempDir(), "o.sock")
	if _, err := attachUnix(g.p, otherSock, pol, "prof", "other"); err != nil {
		t.Fatal(err)
	}
	get := func(sock string) int {
		resp, err := viaProxy(sock).Post(stand.URL+"/warmup/t/v1/messages", "application/json", strings.NewReader("{}"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := get(sock); code != http.StatusForbidden {
		t.Errorf("before admission: %d", code)
	}
	revoke := g.AdmitWarmUp(addr)
	if code := get(sock); code != 200 {
		t.Errorf("admitted: %d", code)
	}
	if code := get(otherSock); code != http.StatusForbidden {
		t.Errorf("another agent while this one is admitted: %d", code)
	}
	revoke()
	if code := get(sock); code != http.StatusForbidden {
		t.Errorf("after revoke: %d", code)
	}
	evs, _, _ := rec.snapshot()
	if len(evs) != 4 || evs[1].Reason != ReasonWarmUp || evs[2].Reason != ReasonLoopback || evs[3].Reason != ReasonLoopback {
		t.Errorf("events %+v", evs)
	}
}

// TestProxyConnectionCap: connections beyond MaxConns are closed at once
// and counted; closing one frees its slot.
func TestProxyConnectionCap(t *testing.T) {
	pol, _ := NewPolicy(Endpoint{"api.anthropic.com", 443}, nil, nil)
	_, sock, rec := testGate(t, Config{MaxConns: 2}, pol, nil, nil)
	var open []net.Conn
	for i := 0; i < 2; i++ {
		c, err := net.Dial("unix", sock)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		open = append(open, c)
	}
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Read(make([]byte, 1)); err == nil || errors.Is(err, context.DeadlineExceeded) || isTimeout(err) {
		t.Fatalf("third connection not closed: %v", err)
	}
	c.Close()
	evs, _, _ := rec.snapshot()
	if len(evs) != 1 || evs[0].Reason != ReasonBusy {
		t.Errorf("events %+v", evs)
	}
	open[0].Close()
	testkit.WaitUntil(t, "the slot freed (a CONNECT served)", 5*time.Second, func() bool {
		_, _, status := connectMaybe(sock, "127.0.0.1:1")
		return status != ""
	})
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// connectMaybe is connect without failing: "" when the proxy hung up.
func connectMaybe(sock, target string) (net.Conn, *bufio.Reader, string) {
	c, err := net.Dial("unix", sock)
	if err != nil {
		return nil, nil, ""
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target)
	resp, err := http.ReadResponse(bufio.NewReader(c), &http.Request{Method: http.MethodConnect})
	if err != nil {
		return nil, nil, ""
	}
	return nil, nil, resp.Status
}

// TestGateCloseEndsTunnels: closing a gate ends its open tunnels and
// removes its socket.
func TestGateCloseEndsTunnels(t *testing.T) {
	echo := echoServer(t)
	pol, _ := NewPolicy(Endpoint{"api.anthropic.com", 443}, []string{echo}, nil)
	g, sock, _ := testGate(t, Config{}, pol, nil, nil)
	c, br, status := connect(t, sock, echo)
	if !strings.HasPrefix(status, "200") {
		t.Fatal(status)
	}
	done := make(chan struct{})
	go func() { g.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close hung on an open tunnel")
	}
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := br.ReadByte(); err == nil || isTimeout(err) {
		t.Errorf("tunnel still open after Close: %v", err)
	}
	if _, err := net.Dial("unix", sock); err == nil {
		t.Errorf("socket still accepts after Close")
	}
}

// TestProxyAnswerWhileBodyInFlight: an upstream may answer before the
// transport is done with the request body (the transport reads the body
// once more after its last byte, to check its length, and a model API may
// start streaming as soon as it has parsed the request). The upstream here
// is an in-memory pipe whose writes block until it reads, and it answers
// before reading: the response head crosses the gate while the transport
// still holds the body. The upstream must then get the whole body, the
// streamed answer must reach the client whole, and the client's
// connection must serve its next request. (The gate's server used to
// drain and close the body when it wrote that head; the transport's next
// read failed, it dropped the upstream connection and the reply was cut
// after its first event: under load the CLI then retried the request.)
func TestProxyAnswerWhileBodyInFlight(t *testing.T) {
	public := netip.MustParseAddr("93.184.215.14")
	const bodyLen = 20000 // below the server's 256 KiB drain limit
	headSeen := make(chan struct{}, 1)
	upstream := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/next" {
			fmt.Fprint(w, "data: next\n\n")
			return
		}
		// Answer first, read the body only once the client has the head
		// (the upstream's own server must not drain it meanwhile).
		_ = http.NewResponseController(w).EnableFullDuplex()
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: head\n\n")
		w.(http.Flusher).Flush()
		select {
		case <-headSeen:
		case <-time.After(5 * time.Second):
		}
		b, err := io.ReadAll(r.Body)
		fmt.Fprintf(w, "data: read %d err=%v\n\n", len(b), err)
	})
	pol, _ := NewPolicy(Endpoint{"model.example", 80}, nil, nil)
	_, sock, _ := testGate(t, Config{}, pol, map[string][]netip.Addr{"model.example": {public}},
		map[netip.AddrPort]http.Handler{netip.AddrPortFrom(public, 80): upstream})

	var conns atomic.Int32
	client := viaProxy(sock)
	dial := client.Transport.(*http.Transport).DialContext
	client.Transport.(*http.Transport).DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		conns.Add(1)
		return dial(ctx, network, addr)
	}
	resp, err := client.Post("http://model.example/v1/messages", "application/json", strings.NewReader(strings.Repeat("x", bodyLen)))
	if err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(resp.Body)
	first, err := br.ReadString('\n')
	if err != nil || first != "data: head\n" {
		t.Fatalf("first event: %q %v", first, err)
	}
	headSeen <- struct{}{}
	rest, err := io.ReadAll(br)
	resp.Body.Close()
	if want := fmt.Sprintf("\ndata: read %d err=<nil>\n\n", bodyLen); err != nil || string(rest) != want {
		t.Fatalf("rest of the stream: %q, %v; want %q", rest, err, want)
	}
	resp, err = client.Get("http://model.example/next")
	if err != nil {
		t.Fatal(err)
	}
	next, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || string(next) != "data: next\n\n" {
		t.Fatalf("next request: %q %v", next, err)
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("%d client connections, want 1 (kept alive)", n)
	}
}

// TestProxyUpstreamFailsBodyUnread: when the upstream cannot be reached
// the request body is never read by the transport; the client gets 502
// and its connection serves the next requests. (With full duplex and the
// body left for the server to consume after the handler, the server
// panicked reading the next request: golang/go#68560.)
func TestProxyUpstreamFailsBodyUnread(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	target := ln.Addr().String()
	ln.Close() // nothing listens there: the dial is refused
	pol, _ := NewPolicy(Endpoint{"api.anthropic.com", 443}, []string{target}, nil)
	_, sock, _ := testGate(t, Config{}, pol, nil, nil)
	var conns atomic.Int32
	client := viaProxy(sock)
	dial := client.Transport.(*http.Transport).DialContext
	client.Transport.(*http.Transport).DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		conns.Add(1)
		return dial(ctx, network, addr)
	}
	for i := 0; i < 3; i++ {
		for _, n := range []int{0, 10, 100000, 200000} {
			resp, err := client.Post("http://"+target+"/", "text/plain", strings.NewReader(strings.Repeat("x", n)))
			if err != nil {
				t.Fatalf("body of %d: %v", n, err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusBadGateway {
				t.Fatalf("body of %d: %s", n, resp.Status)
			}
		}
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("%d client connections, want 1 (kept alive)", n)
	}
}

// attachUnix serves a gate of p on a Unix socket at path, as a sandbox's
// handed-over listener would be served.
func attachUnix(p *Proxy, path string, pol *Policy, profile, session string) (*Gate, error) {
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, err
	}
	g, err := p.Serve(ln, pol, profile, session)
	if err != nil {
		ln.Close()
	}
	return g, err
}
