package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

// webDoc is a config with one web bot and the given web section lines.
func webDoc(webLines ...string) []byte {
	return src(append([]string{
		"agents: {coder: {}}",
		"bots:",
		"  - name: console",
		"    platform: web",
		"    agent: coder",
	}, webLines...)...)
}

func TestWebConfig(t *testing.T) {
	c := mustParse(t, webDoc(
		"web:",
		"  users:",
		`    - { name: ana, role: admin, token: "${WEB_TOKEN_ANA}" }`,
		`    - { name: bo.b, token: "0123456789abcdef" }`,
	), map[string]string{"WEB_TOKEN_ANA": "ana-secret-token-123456"})
	if b := c.WebBot(); b == nil || b.Name != "console" || b.Settings != nil {
		t.Fatalf("WebBot = %v", b)
	}
	want := []WebUser{{"ana", RoleAdmin, "ana-secret-token-123456"}, {"bo.b", RoleUser, "0123456789abcdef"}}
	if len(c.Web.Users) != 2 || c.Web.Users[0] != want[0] || c.Web.Users[1] != want[1] {
		t.Fatalf("users = %#v", c.Web.Users)
	}
	if u := c.WebUser("bo.b"); u == nil || u.Role != RoleUser {
		t.Errorf("WebUser(bo.b) = %v", u)
	}
	if s := c.Summary(); !strings.Contains(s, "web users: ana(admin) bo.b(user)") || strings.Contains(s, "secret") {
		t.Errorf("summary:\n%s", s)
	}
	// Trusted proxies: addresses and prefixes.
	c = mustParse(t, webDoc("web:", `  trusted_proxies: [127.0.0.1, "::1", 10.1.2.3/8]`), nil)
	for i, want := range []string{"127.0.0.1/32", "::1/128", "10.0.0.0/8"} {
		if p, err := ParseTrustedProxy(c.Web.TrustedProxies[i]); err != nil || p.String() != want {
			t.Errorf("trusted_proxies[%d] = %v, %v; want %s", i, p, err, want)
		}
	}
	// Upload limit: a size, 10 MiB by default.
	if c = mustParse(t, webDoc("web:", "  max_upload: 2.5MiB"), nil); c.Web.MaxUpload != 5<<19 {
		t.Errorf("max_upload = %d", c.Web.MaxUpload)
	}
	// No users: valid (the console generates an admin token).
	c = mustParse(t, webDoc(), nil)
	if c.Web.MaxUpload != DefaultWebMaxUpload {
		t.Errorf("default max_upload = %d", c.Web.MaxUpload)
	}
	if len(c.Web.Users) != 0 || !strings.Contains(c.Summary(), "web users: none") {
		t.Errorf("without users: %v\n%s", c.Web.Users, c.Summary())
	}
}

func TestWebConfigProblems(t *testing.T) {
	type want struct {
		line int
		path string
		msg  string
	}
	cases := []struct {
		name string
		data []byte
		env  map[string]string
		want []want
	}{
		{"unknown web key", webDoc("web:", "  user: []"), nil,
			[]want{{7, "web.user", "unknown key (valid keys: max_upload, trusted_proxies, users)"}}},
		{"max_upload too big", webDoc("web:", "  max_upload: 64MiB"), nil,
			[]want{{7, "web.max_upload", "must be from 1MiB to 20MiB"}}},
		{"max_upload too small", webDoc("web:", "  max_upload: 100KiB"), nil,
			[]want{{7, "web.max_upload", "must be from 1MiB to 20MiB"}}},
		{"max_upload zero", webDoc("web:", "  max_upload: 0"), nil,
			[]want{{7, "web.max_upload", "must be at least 1MiB"}}},
		{"max_upload not a size", webDoc("web:", "  max_upload: lots"), nil,
			[]want{{7, "web.max_upload", `bad size "lots"`}}},
		{"bad trusted proxies", webDoc("web:", "  trusted_proxies:", "    - 127.0.0.1", "    - nginx.local", "    - 10.0.0.0/33"), nil,
			[]want{{9, "web.trusted_proxies[1]", `bad trusted proxy "nginx.local": want an IP address or a CIDR prefix`},
				{10, "web.trusted_proxies[2]", `bad trusted proxy "10.0.0.0/33"`}}},
		{"unknown user key", webDoc("web:", "  users:", `    - { name: a, token: "0123456789abcdef", rol: admin }`), nil,
			[]want{{8, "web.users[0].rol", "unknown key"}}},
		{"missing name and token", webDoc("web:", "  users:", "    - { role: admin }"), nil,
			[]want{{8, "web.users[0].name", "name is required"}, {8, "web.users[0].token", "token is required"}}},
		{"bad name", webDoc("web:", "  users:", `    - { name: "a b/c", token: "0123456789abcdef" }`), nil,
			[]want{{8, "web.users[0].name", `bad user name "a b/c"`}}},
		{"duplicate name", webDoc("web:", "  users:", `    - { name: a, token: "0123456789abcdef" }`, `    - { name: a, token: "0123456789abcdeg" }`), nil,
			[]want{{9, "web.users[1].name", `duplicate web user "a" (also web.users[0] at line 8)`}}},
		{"bad role", webDoc("web:", "  users:", `    - { name: a, role: root, token: "0123456789abcdef" }`), nil,
			[]want{{8, "web.users[0].role", `unknown role "root" (want user or admin)`}}},
		{"short token", webDoc("web:", "  users:", `    - { name: a, token: "short" }`), nil,
			[]want{{8, "web.users[0].token", "token is too short (at least 16 characters"}}},
		{"empty token from env", webDoc("web:", "  users:", `    - { name: a, token: "${T}" }`), map[string]string{"T": ""},
			[]want{{8, "web.users[0].token", `is empty (from "${T}")`}}},
		{"unset token env", webDoc("web:", "  users:", `    - { name: a, token: "${T}" }`), nil,
			[]want{{8, "web.users[0].token", "T is not set"}}},
		{"users not a list", webDoc("web:", "  users: ana"), nil,
			[]want{{7, "web.users", "want a list of web users, got a scalar"}}},
		{"two web bots", src("agents: {coder: {}}", "bots:",
			"  - {name: a, platform: web, agent: coder}",
			"  - {name: b, platform: web, agent: coder}"), nil,
			[]want{{4, "bots[1].platform", "only one web bot is allowed (bots[0] at line 3 is one)"}}},
		{"web bot without http", src("http: {listen: \"\"}", "agents: {coder: {}}", "bots:",
			"  - {name: a, platform: web, agent: coder}"), nil,
			[]want{{4, "bots[0].platform", "a web bot is served on http.listen, which is disabled"}}},
		{"slack settings on a web bot", src("agents: {coder: {}}", "bots:",
			"  - name: a", "    platform: web", "    agent: coder", "    slack: {bot_token: x, app_token: y}"), nil,
			[]want{{6, "bots[0].slack", "slack settings given for a web bot"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := problemsOf(t, tc.data, tc.env)
			if len(got) != len(tc.want) {
				t.Fatalf("got %d problems, want %d:\n%s", len(got), len(tc.want), fmtProblems(got))
			}
			for i, w := range tc.want {
				p := got[i]
				if p.Line != w.line || p.Path != w.path || !strings.Contains(p.Msg, w.msg) {
					t.Errorf("problem %d = %s, want line %d %s: …%s…", i, p, w.line, w.path, w.msg)
				}
			}
		})
	}
}

func TestWebUserRedacted(t *testing.T) {
	const secret = "very-secret-web-token"
	u := WebUser{Name: "ana", Role: RoleAdmin, Token: secret}
	var logs bytes.Buffer
	for _, h := range []slog.Handler{slog.NewJSONHandler(&logs, nil), slog.NewTextHandler(&logs, nil)} {
		slog.New(h).Info("user", "user", u, "web", Web{Users: []WebUser{u}})
	}
	js, err := json.Marshal(Config{Web: Web{Users: []WebUser{u}}})
	if err != nil {
		t.Fatal(err)
	}
	outs := []string{logs.String(), string(js)}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s"} {
		outs = append(outs, fmt.Sprintf(verb, u), fmt.Sprintf(verb, Web{Users: []WebUser{u}}))
	}
	for _, o := range outs {
		if strings.Contains(o, secret) {
			t.Errorf("leaks the token: %s", o)
		}
	}
}

// TestExampleWebBlock: the commented-out web bot and web section are valid
// once uncommented.
func TestExampleWebBlock(t *testing.T) {
	lines := strings.Split(string(Example()), "\n")
	bot, web := false, false
	for i, l := range lines {
		switch {
		case strings.HasPrefix(l, "  # - name: console"):
			bot = true
		case strings.HasPrefix(l, "# web:"):
			web = true
		case strings.TrimSpace(l) == "":
			bot = false
		}
		switch {
		case bot && strings.HasPrefix(l, "  # "):
			lines[i] = "  " + strings.TrimPrefix(l, "  # ")
		case web && strings.HasPrefix(l, "# "):
			lines[i] = strings.TrimPrefix(l, "# ")
		}
	}
	env := map[string]string{"WEB_TOKEN_ANA": "0123456789abcdef0123"}
	for k, v := range exampleEnv {
		env[k] = v
	}
	c := mustParse(t, []byte(strings.Join(lines, "\n")), env)
	if b := c.WebBot(); b == nil || b.Name != "console" || len(c.Web.Users) != 1 || c.Web.Users[0].Role != RoleAdmin {
		t.Fatalf("uncommented web bot = %v, users %v", b, c.Web.Users)
	}
}
