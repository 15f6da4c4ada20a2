package web

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentbridge/agentbridge/bridges/adapters/web/webtest"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/store"
)

const (
	anaToken = "ana-token-0123456789"
	bobToken = "bob-token-0123456789"
)

// usersYAML gives ana (admin) and bob (user).
const usersYAML = `web:
  users:
    - { name: ana, role: admin, token: "` + anaToken + `" }
    - { name: bob, role: user, token: "` + bobToken + `" }
`

// testConfig parses a config with a web bot, data_dir in a temp dir, and
// extra YAML appended (e.g. usersYAML).
func testConfig(t *testing.T, listen, extra string) *config.Config {
	t.Helper()
	dir := t.TempDir()
	doc := "data_dir: " + filepath.Join(dir, "data") + "\nhttp: { listen: \"" + listen + "\" }\n" +
		"agents: { coder: { sandbox: none } }\nbots:\n  - { name: console, platform: web, agent: coder }\n" + extra
	cfg, err := config.Parse([]byte(doc), filepath.Join(dir, "bridge.yaml"), func(string) (string, bool) { return "", false }, []config.Platform{Platform()})
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	return cfg
}

// testStore opens a store in a temp dir.
func testStore(t *testing.T) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "bridge.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// newTestConsole makes a console over cfg and serves it; logs go to the
// returned buffer.
func newTestConsole(t *testing.T, cfg *config.Config, st *store.Store) (*Console, *httptest.Server, *bytes.Buffer) {
	t.Helper()
	var logs bytes.Buffer
	if st == nil {
		st = testStore(t)
	}
	c, err := New(Options{Config: cfg, Store: st, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	srv := httptest.NewServer(c.Handler())
	t.Cleanup(func() { c.Shutdown(); srv.Close() })
	return c, srv, &logs
}

// client is a browser-like HTTP client: cookies, no redirects followed,
// the Origin header a browser sends on POST.
type client struct {
	t    *testing.T
	base string
	hc   *http.Client
}

func newClient(t *testing.T, base string) *client {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &client{t: t, base: base, hc: &http.Client{
		Jar:           jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// do sends a request and returns status, body and the response.
func (c *client) do(method, path string, form url.Values, header map[string]string) (int, string, *http.Response) {
	c.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, c.base+path, body)
	if err != nil {
		c.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if method == http.MethodPost {
		req.Header.Set("Origin", c.base)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp
}

// csrfIn returns the first CSRF token of a page.
func csrfIn(t *testing.T, page string) string {
	t.Helper()
	token := webtest.PageCSRF(page)
	if token == "" {
		t.Fatalf("no csrf field in page:\n%s", page)
	}
	return token
}

// signIn signs c in with token and returns the session's CSRF token.
func (c *client) signIn(token string) string {
	c.t.Helper()
	_, page, _ := c.do("GET", "/signin", nil, nil)
	status, body, _ := c.do("POST", "/signin", url.Values{"csrf": {csrfIn(c.t, page)}, "token": {token}, "next": {"/"}}, nil)
	if status != http.StatusSeeOther {
		c.t.Fatalf("sign in: status %d\n%s", status, body)
	}
	_, home, _ := c.do("GET", "/", nil, nil)
	return csrfIn(c.t, home)
}

// newServer serves c until the test ends and returns its URL.
func newServer(t *testing.T, c *Console) string {
	t.Helper()
	srv := httptest.NewServer(c.Handler())
	t.Cleanup(func() { c.Shutdown(); srv.Close() })
	return srv.URL
}

func mustGet(t *testing.T, c *client, path string) string {
	t.Helper()
	s, body, _ := c.do("GET", path, nil, nil)
	if s != http.StatusOK {
		t.Fatalf("GET %s: %d", path, s)
	}
	return body
}
