package web

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/config"
)

// clock is a settable time for a console under test.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// limitConsole serves a console with usersYAML plus extra config, the real
// store and a settable clock.
func limitConsole(t *testing.T, extra string) (*Console, string, *clock) {
	t.Helper()
	clk := &clock{t: time.Now()}
	c, err := New(Options{Config: testConfig(t, "127.0.0.1:9464", usersYAML+extra), Store: testStore(t), Now: clk.now})
	if err != nil {
		t.Fatal(err)
	}
	return c, newServer(t, c), clk
}

// signinAttempt posts token to /signin as a browser whose requests come
// through a proxy that says they are from xff ("" = no header). It uses a
// fixed double-submit pair, as any client may.
func signinAttempt(t *testing.T, base, token, xff string) (int, string, *http.Response) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, base+"/signin", strings.NewReader(url.Values{"csrf": {"pair"}, "token": {token}}.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", base)
	req.AddCookie(&http.Cookie{Name: signinCookie, Value: "pair"})
	if xff != "" {
		req.Header.Set("X-Forwarded-For", xff)
	}
	cl := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := cl.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(body), resp
}

func mustPrefixes(t *testing.T, entries ...string) []netip.Prefix {
	t.Helper()
	var out []netip.Prefix
	for _, e := range entries {
		p, err := config.ParseTrustedProxy(e)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}

// TestSigninLimitPerAddress: behind a trusted proxy, ten wrong tokens from
// one client address, then that address gets 429 with Retry-After and a
// page saying so, even with a right token; another address (and another
// user) signs in and fails as usual; after the window the address may try
// again. X-Forwarded-For from a connection that is not a trusted proxy
// changes nothing: the connection's address is counted.
func TestSigninLimitPerAddress(t *testing.T) {
	_, base, clk := limitConsole(t, "  trusted_proxies: [127.0.0.1]\n")
	const attacker, other = "203.0.113.7", "198.51.100.9"
	for i := range signinPerAddr {
		if s, _, _ := signinAttempt(t, base, fmt.Sprintf("wrong-token-%04d-xxxx", i), attacker); s != http.StatusUnauthorized {
			t.Fatalf("failure %d: status %d, want 401", i+1, s)
		}
	}
	for _, tok := range []string{"wrong-token-again-xxxx", anaToken} {
		s, body, resp := signinAttempt(t, base, tok, attacker)
		retry, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
		if s != http.StatusTooManyRequests || retry < 1 || retry > int(signinWindow.Seconds()) {
			t.Fatalf("after %d failures: status %d, Retry-After %q; want 429 within the window", signinPerAddr, s, resp.Header.Get("Retry-After"))
		}
		if !strings.Contains(body, "Too many failed sign-ins from your address. Try again in 15 minutes.") {
			t.Errorf("the 429 page does not say why:\n%s", body)
		}
	}
	// Another address: not blocked, wrong tokens fail as usual, bob signs in.
	if s, _, _ := signinAttempt(t, base, "wrong-token-other-xxxx", other); s != http.StatusUnauthorized {
		t.Errorf("another address, wrong token: status %d, want 401", s)
	}
	if s, _, _ := signinAttempt(t, base, bobToken, other); s != http.StatusSeeOther {
		t.Errorf("another address, bob's token: status %d, want 303", s)
	}
	// The same address through a chain of proxies is still that address.
	if s, _, _ := signinAttempt(t, base, anaToken, attacker+", 127.0.0.1"); s != http.StatusTooManyRequests {
		t.Errorf("the attacker behind two trusted proxies: status %d, want 429", s)
	}
	clk.add(signinWindow)
	if s, _, _ := signinAttempt(t, base, anaToken, attacker); s != http.StatusSeeOther {
		t.Errorf("after the window: status %d, want 303", s)
	}

	// No trusted proxies: X-Forwarded-For is the client's word and ignored.
	_, base, _ = limitConsole(t, "")
	for i := range signinPerAddr {
		signinAttempt(t, base, "wrong-token-spoofed-xx", fmt.Sprintf("192.0.2.%d", i+1))
	}
	if s, _, _ := signinAttempt(t, base, anaToken, "192.0.2.200"); s != http.StatusTooManyRequests {
		t.Errorf("a spoofed X-Forwarded-For escaped the limit: status %d, want 429", s)
	}
}

// TestSigninLimitTotal: wrong tokens from many addresses, one each, trip
// the total limit; then an address that failed once is refused at once,
// an address that did not may try once, and a right token from a new
// address signs in.
func TestSigninLimitTotal(t *testing.T) {
	_, base, _ := limitConsole(t, "  trusted_proxies: [127.0.0.1]\n")
	for i := range signinTotal {
		if s, _, _ := signinAttempt(t, base, "wrong-token-spray-xxxx", fmt.Sprintf("10.1.%d.%d", i/250, i%250+1)); s != http.StatusUnauthorized {
			t.Fatalf("spray %d: status %d, want 401", i, s)
		}
	}
	if s, _, _ := signinAttempt(t, base, "wrong-token-spray-xxxx", "10.1.0.1"); s != http.StatusTooManyRequests {
		t.Errorf("an address with a failure, past the total: status %d, want 429", s)
	}
	if s, _, _ := signinAttempt(t, base, anaToken, "10.9.9.9"); s != http.StatusSeeOther {
		t.Errorf("a new address with ana's token, past the total: status %d, want 303", s)
	}
	if s, _, _ := signinAttempt(t, base, "wrong-token-new-xxxxx", "10.9.9.10"); s != http.StatusUnauthorized {
		t.Errorf("a new address's first wrong token, past the total: status %d, want 401", s)
	}
	if s, _, _ := signinAttempt(t, base, "wrong-token-new-xxxxx", "10.9.9.10"); s != http.StatusTooManyRequests {
		t.Errorf("a new address's second attempt, past the total: status %d, want 429", s)
	}
}

// TestSigninLimiterBounded: a spray of wrong tokens from more addresses
// than the limiter tracks leaves it at its bound; the addresses of one
// IPv6 /64 count as one.
func TestSigninLimiterBounded(t *testing.T) {
	c, base, _ := limitConsole(t, "  trusted_proxies: [127.0.0.1]\n")
	const n = signinAddrs + 1000
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += 8 {
				signinAttempt(t, base, "wrong-token-spray-xxxx", fmt.Sprintf("2001:db8:%x:%x::1", i/65536, i%65536))
			}
		}()
	}
	wg.Wait()
	if got := c.limit.size(); got != signinAddrs {
		t.Errorf("after failures from %d addresses the limiter holds %d, want its bound %d", n, got, signinAddrs)
	}
	for i := range signinPerAddr {
		signinAttempt(t, base, "wrong-token-six-xxxxx", fmt.Sprintf("2001:db8:ffff:1::%x", i+1))
	}
	if s, _, _ := signinAttempt(t, base, anaToken, "2001:db8:ffff:1::ffff"); s != http.StatusTooManyRequests {
		t.Errorf("another address of the same /64: status %d, want 429", s)
	}
}

// TestClientAddr: which address failures count under.
func TestClientAddr(t *testing.T) {
	trusted := mustPrefixes(t, "127.0.0.1", "10.0.0.0/8")
	for _, tc := range []struct {
		remote, xff string
		trusted     bool
		want        string
	}{
		{"203.0.113.1:5000", "", true, "203.0.113.1"},
		{"203.0.113.1:5000", "198.51.100.1", true, "203.0.113.1"}, // not from a proxy: header ignored
		{"127.0.0.1:5000", "198.51.100.1", true, "198.51.100.1"},
		{"127.0.0.1:5000", "198.51.100.1", false, "127.0.0.1"},
		{"127.0.0.1:5000", "6.6.6.6, 198.51.100.1, 10.2.3.4", true, "198.51.100.1"}, // the left part is the client's word
		{"127.0.0.1:5000", "garbage, 10.2.3.4", true, "10.2.3.4"},
		{"127.0.0.1:5000", "", true, "127.0.0.1"},
		{"[2001:db8:1:2:3:4:5:6]:5000", "", true, "2001:db8:1:2::/64"},
		{"[::ffff:203.0.113.1]:5000", "", true, "203.0.113.1"},
		{"pipe", "", true, "unknown"},
	} {
		r := httptest.NewRequest(http.MethodPost, "/signin", nil)
		r.RemoteAddr = tc.remote
		if tc.xff != "" {
			r.Header.Set("X-Forwarded-For", tc.xff)
		}
		tr := trusted
		if !tc.trusted {
			tr = nil
		}
		if got := clientAddr(r, tr); got != tc.want {
			t.Errorf("clientAddr(%s, XFF %q, trusted %v) = %q, want %q", tc.remote, tc.xff, tc.trusted, got, tc.want)
		}
	}
}
