package config

import (
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

func TestHandoffValues(t *testing.T) {
	c := mustParse(t, withRetention(
		"handoff:",
		"  users:",
		"    - name: ana",
		"      token: ${HANDOFF_TOKEN_ANA}",
		"      as: { phone: \"+15551234567\" }",
	), map[string]string{"HANDOFF_TOKEN_ANA": "ana-token-0123456789abcdef"})
	if len(c.Handoff.Users) != 1 {
		t.Fatalf("users = %v", c.Handoff.Users)
	}
	u := c.Handoff.Users[0]
	if u.Name != "ana" || u.As["phone"] != "+15551234567" {
		t.Errorf("user = %v %v", u, u.As)
	}
	if got := c.HandoffUserByToken("ana-token-0123456789abcdef"); got == nil || got.Name != "ana" {
		t.Errorf("HandoffUserByToken(ana's) = %v", got)
	}
	for _, tok := range []string{"", "ana-token-0123456789abcde", "ana-token-0123456789abcdefX"} {
		if got := c.HandoffUserByToken(tok); got != nil {
			t.Errorf("HandoffUserByToken(%q) = %v, want nil", tok, got)
		}
	}
	var logged strings.Builder
	slog.New(slog.NewTextHandler(&logged, nil)).Info("cfg", "u", u)
	for _, out := range []string{c.Summary(), fmt.Sprint(u), fmt.Sprintf("%#v", u), fmt.Sprintf("%+v", c.Handoff), logged.String()} {
		if strings.Contains(out, "0123456789abcdef") {
			t.Errorf("the token leaks: %s", out)
		}
	}
	if !strings.Contains(c.Summary(), "handoff users: ana(phone)\n") {
		t.Errorf("summary lacks the handoff line:\n%s", c.Summary())
	}
	if off := mustParse(t, withRetention(), nil); len(off.Handoff.Users) != 0 || strings.Contains(off.Summary(), "handoff users") ||
		off.HandoffUserByToken("") != nil {
		t.Errorf("absent handoff: %v, summary:\n%s", off.Handoff, off.Summary())
	}
}

func TestHandoffProblems(t *testing.T) {
	const tok = "0123456789abcdef0"
	cases := []struct {
		name  string
		lines []string
		line  int
		path  string
		msg   string
	}{
		{"no name", []string{"    - { token: " + tok + ", as: { phone: x } }"}, 7, "handoff.users[0].name", "name is required"},
		{"bad name", []string{"    - { name: \"a b\", token: " + tok + ", as: { phone: x } }"}, 7, "handoff.users[0].name", "bad user name"},
		{"no token", []string{"    - { name: ana, as: { phone: x } }"}, 7, "handoff.users[0].token", "token is required"},
		{"short token", []string{"    - { name: ana, token: short, as: { phone: x } }"}, 7, "handoff.users[0].token", "too short"},
		{"no as", []string{"    - { name: ana, token: " + tok + " }"}, 7, "handoff.users[0].as", "as is required"},
		{"unknown bot", []string{"    - name: ana", "      token: " + tok, "      as: { nobot: x }"}, 9, "handoff.users[0].as.nobot", "bot \"nobot\" is not defined"},
		{"empty id", []string{"    - name: ana", "      token: " + tok, "      as: { phone: \"\" }"}, 9, "handoff.users[0].as.phone", "empty user id"},
		{"unknown key", []string{"    - { name: ana, token: " + tok + ", as: { phone: x }, role: admin }"}, 7, "handoff.users[0].role", "unknown key"},
		{"duplicate name", []string{"    - { name: ana, token: " + tok + ", as: { phone: x } }", "    - { name: ana, token: " + tok + "1, as: { phone: y } }"}, 8, "handoff.users[1].name", "duplicate handoff user"},
		{"shared token", []string{"    - { name: ana, token: " + tok + ", as: { phone: x } }", "    - { name: bob, token: " + tok + ", as: { phone: y } }"}, 8, "handoff.users[1].token", "each person needs their own"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := problemsOf(t, withRetention(append([]string{"handoff:", "  users:"}, tc.lines...)...), nil)
			if len(got) != 1 {
				t.Fatalf("got %d problems, want 1:\n%s", len(got), fmtProblems(got))
			}
			if p := got[0]; p.Line != tc.line || p.Path != tc.path || !strings.Contains(p.Msg, tc.msg) {
				t.Errorf("problem = %s; want line %d, path %s, message containing %q", p, tc.line, tc.path, tc.msg)
			}
		})
	}
}

// TestExampleHandoffBlock: the commented-out handoff section of the
// example is valid once uncommented.
func TestExampleHandoffBlock(t *testing.T) {
	lines := strings.Split(string(Example()), "\n")
	in := false
	for i, l := range lines {
		switch {
		case strings.HasPrefix(l, "# handoff:"):
			in = true
		case strings.TrimSpace(l) == "":
			in = false
		}
		if in {
			lines[i] = strings.TrimPrefix(l, "# ")
		}
	}
	env := map[string]string{"HANDOFF_TOKEN_ANA": "0123456789abcdef0123"}
	for k, v := range exampleEnv {
		env[k] = v
	}
	c := mustParse(t, []byte(strings.Join(lines, "\n")), env)
	if len(c.Handoff.Users) != 1 || c.Handoff.Users[0].Name != "ana" || c.Handoff.Users[0].As["team-slack"] != "U0123ABCD" {
		t.Fatalf("uncommented handoff = %v", c.Handoff.Users)
	}
}
