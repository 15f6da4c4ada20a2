package web

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/bridges/adapters/web/auth"
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
	req.AddCookie(&http.Cookie{Name: auth.SigninCookie, Value: "pair"})
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

// TestSigninLimitPerAddress: behind a trusted proxy, ten wrong tokens from
// one client address, then that address gets 429 with Retry-After and a
// page saying so, even with a right token; another address (and another
// user) signs in and fails as usual; after the window the address may try
// again. X-Forwarded-For from a connection that is not a trusted proxy
// changes nothing: the connection's address is counted.
func TestSigninLimitPerAddress(t *testing.T) {
	_, base, clk := limitConsole(t, "  trusted_proxies: [127.0.0.1]\n")
	const attacker, other = "203.0.113.7", "198.51.100.9"
	for i := range auth.SigninPerAddr {
		if s, _, _ := signinAttempt(t, base, fmt.Sprintf("wrong-token-%04d-xxxx", i), attacker); s != http.StatusUnauthorized {
			t.Fatalf("failure %d: status %d, want 401", i+1, s)
		}
	}
	for _, tok := range []string{"wrong-token-again-xxxx", anaToken} {
		s, body, resp := signinAttempt(t, base, tok, attacker)
		retry, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
		if s != http.StatusTooManyRequests || retry < 1 || retry > int(auth.SigninWindow.Seconds()) {
			t.Fatalf("after %d failures: status %d, Retry-After %q; want 429 within the window", auth.SigninPerAddr, s, resp.Header.Get("Retry-After"))
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
	clk.add(auth.SigninWindow)
	if s, _, _ := signinAttempt(t, base, anaToken, attacker); s != http.StatusSeeOther {
		t.Errorf("after the window: status %d, want 303", s)
	}

	// No trusted proxies: X-Forwarded-For is the client's word and ignored.
	_, base, _ = limitConsole(t, "")
	for i := range auth.SigninPerAddr {
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
	for i := range auth.SigninTotal {
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
	const n = auth.SigninAddrs + 1000
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
	if got := c.limit.Size(); got != auth.SigninAddrs {
		t.Errorf("after failures from %d addresses the limiter holds %d, want its bound %d", n, got, auth.SigninAddrs)
	}
	for i := range auth.SigninPerAddr {
		signinAttempt(t, base, "wrong-token-six-xxxxx", fmt.Sprintf("2001:db8:ffff:1::%x", i+1))
	}
	if s, _, _ := signinAttempt(t, base, anaToken, "2001:db8:ffff:1::ffff"); s != http.StatusTooManyRequests {
		t.Errorf("another address of the same /64: status %d, want 429", s)
	}
}

func TestSignIn(t *testing.T) {
	_, srv, logs := newTestConsole(t, testConfig(t, "127.0.0.1:9464", usersYAML), nil)
	c := newClient(t, srv.URL)

	// Not signed in: pages send to the sign-in page, posts are refused.
	if s, _, resp := c.do("GET", "/chat/abcdefgh12", nil, nil); s != http.StatusSeeOther || !strings.HasPrefix(resp.Header.Get("Location"), "/signin?next=") {
		t.Fatalf("GET chat signed out: %d %s", s, resp.Header.Get("Location"))
	}
	if s, _, _ := c.do("POST", "/chat/abcdefgh12/send", url.Values{"text": {"x"}}, nil); s != http.StatusUnauthorized {
		t.Errorf("POST signed out: %d, want 401", s)
	}

	_, page, resp := c.do("GET", "/signin", nil, nil)
	form := csrfIn(t, page)
	var signinCk *http.Cookie
	for _, ck := range resp.Cookies() {
		if ck.Name == auth.SigninCookie {
			signinCk = ck
		}
	}
	if signinCk == nil || !signinCk.HttpOnly || signinCk.SameSite != http.SameSiteStrictMode {
		t.Fatalf("sign-in cookie = %+v", signinCk)
	}

	cases := []struct {
		name   string
		form   func(csrf string) url.Values
		status int
	}{
		{"no csrf", func(string) url.Values { return url.Values{"token": {anaToken}} }, http.StatusForbidden},
		{"wrong csrf", func(string) url.Values { return url.Values{"token": {anaToken}, "csrf": {"forged"}} }, http.StatusForbidden},
		{"wrong token", func(f string) url.Values { return url.Values{"token": {"nope-nope-nope-nope"}, "csrf": {f}} }, http.StatusUnauthorized},
	}
	for _, tc := range cases {
		if s, _, _ := c.do("POST", "/signin", tc.form(form), nil); s != tc.status {
			t.Errorf("%s: status %d, want %d", tc.name, s, tc.status)
		}
		_, page, _ = c.do("GET", "/signin", nil, nil) // a fresh form token
		form = csrfIn(t, page)
	}

	s, _, resp := c.do("POST", "/signin", url.Values{"token": {anaToken}, "csrf": {form}, "next": {"//evil.example/x"}}, nil)
	if s != http.StatusSeeOther || resp.Header.Get("Location") != "/" {
		t.Fatalf("sign in: %d to %q, want 303 to / (no open redirect)", s, resp.Header.Get("Location"))
	}
	var sess *http.Cookie
	for _, ck := range resp.Cookies() {
		if ck.Name == auth.SessionCookie {
			sess = ck
		}
	}
	if sess == nil || !sess.HttpOnly || sess.SameSite != http.SameSiteStrictMode || sess.Secure {
		t.Fatalf("session cookie = %+v (want HttpOnly, SameSite=Strict, not Secure over http)", sess)
	}
	if s, body, _ := c.do("GET", "/", nil, nil); s != http.StatusOK || !strings.Contains(body, `id="whoami">ana`) {
		t.Fatalf("home: %d\n%s", s, body)
	}
	if strings.Contains(logs.String(), anaToken) {
		t.Error("logs contain the token")
	}

	// Behind an https proxy the cookies are Secure.
	c = newClient(t, srv.URL)
	_, page, _ = c.do("GET", "/signin", nil, map[string]string{"X-Forwarded-Proto": "https"})
	_, _, resp = c.do("POST", "/signin", url.Values{"token": {bobToken}, "csrf": {csrfIn(t, page)}}, map[string]string{"X-Forwarded-Proto": "https"})
	for _, ck := range resp.Cookies() {
		if ck.Name == auth.SessionCookie && !ck.Secure {
			t.Errorf("session cookie over https is not Secure: %+v", ck)
		}
	}
}

func TestGeneratedAdminToken(t *testing.T) {
	cfg := testConfig(t, "0.0.0.0:9464", "")
	st := testStore(t)
	c, srv, logs := newTestConsole(t, cfg, st)
	path := filepath.Join(cfg.DataDir, auth.AdminTokenFile)
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("token file mode %v, want 0600", fi.Mode().Perm())
	}
	raw, _ := os.ReadFile(path)
	token := strings.TrimSpace(string(raw))
	var out bytes.Buffer
	c.Announce(&out)
	if want := "http://127.0.0.1:9464/signin#token=" + token; !strings.Contains(out.String(), want) {
		t.Errorf("announcement lacks the sign-in link %s:\n%s", want, out.String())
	}
	if !strings.Contains(logs.String(), "non-loopback") || strings.Contains(logs.String(), token) {
		t.Errorf("want a plain-HTTP warning and no token in the logs:\n%s", logs.String())
	}
	// A later start prints the link again while nobody has signed in.
	again, err := New(Options{Config: cfg, Store: st})
	if err != nil {
		t.Fatal(err)
	}
	out.Reset()
	again.Announce(&out)
	if want := "http://127.0.0.1:9464/signin#token=" + token; !strings.Contains(out.String(), want) {
		t.Errorf("a second start before anybody signed in lacks the sign-in link %s:\n%s", want, out.String())
	}
	if cl := newClient(t, srv.URL); cl.signIn(token) == "" {
		t.Fatal("no session with the generated token")
	}

	// Once somebody signed in, a start reuses the token and does not print it.
	c2, err := New(Options{Config: cfg, Store: st})
	if err != nil {
		t.Fatal(err)
	}
	out.Reset()
	c2.Announce(&out)
	if strings.Contains(out.String(), token) || !strings.Contains(out.String(), path) {
		t.Errorf("announcement after a sign-in: %q", out.String())
	}
	if want := " web-link -config "; !strings.Contains(out.String(), want) { // a command that works (issue 39)
		t.Errorf("announcement after a sign-in lacks %q: %q", want, out.String())
	}
	// A token file others can read is refused.
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := New(Options{Config: cfg, Store: st}); err == nil || !strings.Contains(err.Error(), "readable by other users") {
		t.Errorf("New with a 0644 token file: %v", err)
	}
}
