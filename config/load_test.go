package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/config/decode"
	"github.com/agentbridge/agentbridge/config/policy"
	"github.com/agentbridge/agentbridge/config/profile"
)

// minimal is the smallest valid config: one agent with all defaults and
// one WhatsApp bot (which needs no token).
var minimal = src(
	"agents:",
	"  coder:",
	"bots:",
	"  - {name: phone, platform: whatsapp, agent: coder}",
)

func TestDefaults(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "bridge.yaml")
	if err := os.WriteFile(file, minimal, 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := Load(file, envOf(nil), testPlatforms)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	a := c.Agents["coder"]
	b := c.Bots[0]
	checks := []struct {
		name      string
		got, want any
	}{
		{"data_dir", c.DataDir, filepath.Join(dir, "data")},
		{"DBPath", c.DBPath(), filepath.Join(dir, "data", "bridge.db")},
		{"log.level", c.Log.Level, "info"},
		{"log.format", c.Log.Format, "text"},
		{"http.listen", c.HTTP.Listen, "127.0.0.1:9464"},
		{"retention", c.Retention, 90 * 24 * time.Hour},
		{"agent name", a.Name, "coder"},
		{"command", a.Command, "claude"},
		{"workdir", a.Workdir, filepath.Join(dir, "workspace")},
		{"home", a.Home, ""},
		{"permission_mode", a.PermissionMode, "default"},
		{"idle_timeout", a.IdleTimeout, 30 * time.Minute},
		{"approval_timeout", a.ApprovalTimeout, 10 * time.Minute},
		{"max_live", a.MaxLive, 8},
		{"warm_spares", a.WarmSpares, 1},
		{"max_turns", a.MaxTurns, 0},
		{"sandbox", a.Sandbox, profile.DefaultSandbox()},
		{"sandbox_binds", len(a.SandboxBinds), 0},
		{"config path", c.Path, file},
		{"verbosity", b.Verbosity, "compact"},
		{"whatsapp settings, read without a mapping", settingsOf(b)["platform"], "whatsapp"},
		{"Bot(phone)", c.Bot("phone") == b, true},
		{"Bot(none)", c.Bot("none") == nil, true},
	}
	for _, ch := range checks {
		if ch.got != ch.want {
			t.Errorf("%s = %v, want %v", ch.name, ch.got, ch.want)
		}
	}
}

// TestExplicitValues: explicit values win over defaults, zero durations
// stay zero, relative paths follow the config file, absolute ones are kept.
func TestExplicitValues(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "conf", "bridge.yaml")
	data := src(
		"data_dir: state",
		"log: {level: debug, format: json}",
		"http: {listen: \":9000\"}",
		"agents:",
		"  coder:",
		"    command: ./bin/claude",
		"    args: [--verbose, --debug]",
		"    workdir: /srv/work",
		"    home: home",
		"    permission_mode: bypassPermissions",
		"    allow_bypass: true",
		"    max_turns: 5",
		"    idle_timeout: 0",
		"    approval_timeout: 1h30m",
		"    max_live: 2",
		"    warm_spares: 0",
		"    sandbox: none",
		"    sandbox_binds: [{path: ref}, {path: /srv/out, mode: rw}]",
		"    env: {EMPTY: , X: y}",
		"    rules:",
		"      - {tool: Read, action: allow}",
		"      - {tool: Bash, match: \"rm *\", action: deny}",
		"bots:",
		"  - name: s",
		"    platform: slack",
		"    agent: coder",
		"    verbosity: full",
		"    slack: {bot_token: b, app_token: a, api_url: \"http://127.0.0.1:1234/api\"}",
		"    access: {channels: [C1], users: [U1, U2], approvers: [U3], admins: [U4]}",
		"  - name: p",
		"    platform: whatsapp",
		"    agent: coder",
		"    whatsapp: {device_store: /var/wa.db}",
	)
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, data, 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := Load(file, envOf(nil), testPlatforms)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	a := c.Agents["coder"]
	s := c.Bots[0]
	base := filepath.Dir(file)
	checks := []struct {
		name      string
		got, want any
	}{
		{"data_dir", c.DataDir, filepath.Join(base, "state")},
		{"log", c.Log, Log{Level: "debug", Format: "json"}},
		{"listen", c.HTTP.Listen, ":9000"},
		{"command", a.Command, filepath.Join(base, "bin", "claude")},
		{"args", len(a.Args), 2},
		{"workdir", a.Workdir, "/srv/work"},
		{"home", a.Home, filepath.Join(base, "home")},
		{"permission_mode", a.PermissionMode, "bypassPermissions"},
		{"max_turns", a.MaxTurns, 5},
		{"idle_timeout", a.IdleTimeout, time.Duration(0)},
		{"approval_timeout", a.ApprovalTimeout, 90 * time.Minute},
		{"max_live", a.MaxLive, 2},
		{"warm_spares", a.WarmSpares, 0},
		{"sandbox", a.Sandbox, "none"},
		{"bind ro", a.SandboxBinds[0], profile.SandboxBind{Path: filepath.Join(base, "ref")}},
		{"bind rw", a.SandboxBinds[1], profile.SandboxBind{Path: "/srv/out", Writable: true}},
		{"env EMPTY", a.Env["EMPTY"], ""},
		{"env X", a.Env["X"], "y"},
		{"env size", len(a.Env), 2},
		{"rule 1", a.Rules[1], policy.Rule{Tool: "Bash", Match: "rm *", Action: "deny"}},
		{"verbosity", s.Verbosity, "full"},
		{"api_url gets a slash", settingsOf(s)["api_url"], "http://127.0.0.1:1234/api/"},
		{"users", slices.Equal(s.Access.Users, []string{"U1", "U2"}), true},
		{"admins", slices.Equal(s.Access.Admins, []string{"U4"}), true},
		{"whatsapp settings", settingsOf(c.Bots[1])["device_store"], "/var/wa.db"},
	}
	for _, ch := range checks {
		if ch.got != ch.want {
			t.Errorf("%s = %v, want %v", ch.name, ch.got, ch.want)
		}
	}
}

func TestHTTPListen(t *testing.T) {
	cases := []struct {
		name, http, want string
	}{
		{"absent", "", "127.0.0.1:9464"},
		{"empty mapping", "http: {}", "127.0.0.1:9464"},
		{"null", "http: {listen: }", "127.0.0.1:9464"},
		{"explicit empty disables", `http: {listen: ""}`, ""},
		{"set", "http: {listen: \"0.0.0.0:80\"}", "0.0.0.0:80"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := mustParse(t, append([]byte(tc.http+"\n"), minimal...), nil)
			if c.HTTP.Listen != tc.want {
				t.Errorf("listen = %q, want %q", c.HTTP.Listen, tc.want)
			}
		})
	}
}

func TestLoadMissingFile(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "nope.yaml"), nil, testPlatforms)
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Load of a missing file: %v, want fs.ErrNotExist", err)
	}
	var ve *ValidationError
	if errors.As(err, &ve) {
		t.Errorf("a read error must not be a ValidationError")
	}
}

// TestValidationErrorFormat: one line per problem, file:line: path: msg,
// and no line number when it is unknown.
func TestValidationErrorFormat(t *testing.T) {
	e := &ValidationError{File: "conf/bridge.yaml", Problems: []decode.Problem{
		{Line: 12, Path: "bots[0].agent", Msg: `agent "nope" is not defined`},
		{Line: 3, Msg: "invalid YAML: x"},
		{Path: "bots", Msg: "at least one bot is required"},
	}}
	want := "conf/bridge.yaml:12: bots[0].agent: agent \"nope\" is not defined\n" +
		"conf/bridge.yaml:3: invalid YAML: x\n" +
		"conf/bridge.yaml: bots: at least one bot is required"
	if e.Error() != want {
		t.Errorf("Error() =\n%s\nwant\n%s", e.Error(), want)
	}
}

// TestAliases: anchors and aliases work, and problems in aliased values
// are reported on the line where the alias is used.
func TestAliases(t *testing.T) {
	head := []string{
		"agents:",
		"  a: {allowed_tools: &tools [Read, Grep]}",
		"  b: {allowed_tools: *tools, model: &m opus}",
		"bots:",
		"  - {name: x, platform: whatsapp, agent: a}",
	}
	c := mustParse(t, src(append(head, "  - {name: y, platform: whatsapp, agent: b}")...), nil)
	if got := c.Agents["b"].AllowedTools; !slices.Equal(got, []string{"Read", "Grep"}) {
		t.Errorf("aliased allowed_tools = %v", got)
	}
	got := problemsOf(t, src(append(head, "  - {name: y, platform: whatsapp, agent: b, verbosity: *m}")...), nil)
	if len(got) != 1 || got[0].Line != 6 || got[0].Path != "bots[1].verbosity" {
		t.Errorf("problems:\n%s\nwant one at 6: bots[1].verbosity", fmtProblems(got))
	}
}

// TestAliasBudget: reusing a large anchored list many times cannot make
// loading arbitrarily slow; the decoder stops with a problem instead.
func TestAliasBudget(t *testing.T) {
	var b strings.Builder
	b.WriteString("agents:\n  a0: {allowed_tools: &big [" + strings.Repeat("Read, ", 3000) + "Read]}\n")
	for i := 1; i < 1000; i++ {
		fmt.Fprintf(&b, "  a%d: {allowed_tools: *big, disallowed_tools: *big}\n", i)
	}
	start := time.Now()
	got := problemsOf(t, []byte(b.String()), nil)
	if !slices.ContainsFunc(got, func(p decode.Problem) bool { return strings.Contains(p.Msg, "document too complex") }) {
		t.Errorf("no budget problem; got %d problems, first: %v", len(got), got[0])
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("Parse took %v", d)
	}
}
