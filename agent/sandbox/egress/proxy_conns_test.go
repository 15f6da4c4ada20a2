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
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/internal/testkit"
)

// The gate's connections: the warm-up stand-in's admission, the connection
// cap, tunnels ended by Close, bodies in flight when the upstream answers or
// fails.

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

	client, conns := countingClient(sock)
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
	client, conns := countingClient(sock)
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

// countingClient is viaProxy(sock) counting the connections it opens to
// the proxy.
func countingClient(sock string) (*http.Client, *atomic.Int32) {
	var conns atomic.Int32
	client := viaProxy(sock)
	dial := client.Transport.(*http.Transport).DialContext
	client.Transport.(*http.Transport).DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		conns.Add(1)
		return dial(ctx, network, addr)
	}
	return client, &conns
}
