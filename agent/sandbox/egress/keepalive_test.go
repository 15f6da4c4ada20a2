package egress

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"slices"
	"sync"
	"testing"
)

// TestProxyKeepAliveByJudgedAddress: plain requests reuse an upstream
// connection only when judged to the same address. A name that resolves
// to another allowed address for the next request gets a connection of its
// own to that address, never the pooled one; a name judged to the pooled
// address again reuses it (one dial per address).
func TestProxyKeepAliveByJudgedAddress(t *testing.T) {
	a, b := netip.MustParseAddr("93.184.215.14"), netip.MustParseAddr("93.184.215.15")
	serve := func(name string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprintf(w, "%s host=%s", name, r.Host) })
	}
	fakes := map[netip.AddrPort]http.Handler{netip.AddrPortFrom(a, 80): serve("a"), netip.AddrPortFrom(b, 80): serve("b")}
	pol, _ := NewPolicy(Endpoint{"api.anthropic.com", 443}, nil, nil)
	g, sock, rec := testGate(t, Config{}, pol, nil, fakes)
	var mu sync.Mutex
	n := 0
	g.p.cfg.Resolve = func(_ context.Context, host string) ([]netip.Addr, error) {
		mu.Lock()
		defer mu.Unlock()
		n++
		if host == "flip.example" && n%3 == 0 { // a, a, b, a, a, b, …
			return []netip.Addr{b}, nil
		}
		return []netip.Addr{a}, nil
	}
	client := viaProxy(sock)
	for i := range 9 {
		resp, err := client.Get("http://flip.example/")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		evs, _, _ := rec.snapshot()
		want := "a"
		if evs[len(evs)-1].Addr.Addr() == b {
			want = "b"
		}
		if string(body) != want+" host=flip.example" {
			t.Fatalf("request %d judged to %s reached %q", i, evs[len(evs)-1].Addr, body)
		}
	}
	_, _, dials := rec.snapshot()
	slices.SortFunc(dials, func(x, y netip.AddrPort) int { return x.Compare(y) })
	if want := []netip.AddrPort{netip.AddrPortFrom(a, 80), netip.AddrPortFrom(b, 80)}; !slices.Equal(dials, want) {
		t.Errorf("dials %v, want one per judged address %v", dials, want)
	}
}
