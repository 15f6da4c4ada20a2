package config

import (
	"strings"
	"testing"
)

// TestMinimalLoads: the config `make run` writes on a fresh machine loads
// with no environment at all, and its only bot is the web console.
func TestMinimalLoads(t *testing.T) {
	tests := []struct {
		name       string
		env        map[string]string
		wantListen string
		wantKey    string
	}{
		{"no environment", nil, DefaultHTTPListen, ""},
		{"port and key from the environment", map[string]string{"BRIDGE_LISTEN": "127.0.0.1:8080", "ANTHROPIC_API_KEY": "sk-test"},
			"127.0.0.1:8080", "sk-test"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := mustParse(t, Minimal(), tc.env)
			if len(c.Bots) != 1 || c.Bots[0].Platform != PlatformWeb || c.Bots[0].Name != "console" || c.Bots[0].Agent != "coder" {
				t.Fatalf("bots = %v, want only the web console", c.Bots)
			}
			if len(c.Agents) != 1 || c.Agents["coder"] == nil {
				t.Fatalf("agents = %v, want coder", c.Agents)
			}
			if c.HTTP.Listen != tc.wantListen {
				t.Errorf("http.listen = %q, want %q", c.HTTP.Listen, tc.wantListen)
			}
			if got := c.Agents["coder"].Env["ANTHROPIC_API_KEY"]; got != tc.wantKey {
				t.Errorf("ANTHROPIC_API_KEY = %q, want %q", got, tc.wantKey)
			}
			if got := c.Bots[0].Access.Admins; len(got) != 1 || got[0] != "admin" {
				t.Errorf("console admins = %v, want the generated admin", got)
			}
			if len(c.Web.Users) != 0 {
				t.Errorf("web users = %v, want none (a token is generated)", c.Web.Users)
			}
		})
	}
}

// TestMinimalIsInTheExample: every key the minimal config sets is also in
// the full example, so copying bots from one into the other works.
func TestMinimalIsInTheExample(t *testing.T) {
	example := string(Example())
	for _, line := range strings.Split(string(Minimal()), "\n") {
		key, _, ok := strings.Cut(strings.TrimLeft(strings.TrimPrefix(strings.TrimSpace(line), "- "), "# "), ":")
		if !ok || strings.ContainsAny(key, " \"{") || key == "" {
			continue
		}
		if !strings.Contains(example, key+":") {
			t.Errorf("minimal config key %q is not in the example", key)
		}
	}
}
