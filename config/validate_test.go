package config

import (
	"slices"
	"strings"
	"testing"

	"github.com/agentbridge/agentbridge/config/decode"
)

// TestProblems checks, rule by rule, that an invalid config yields exactly
// the expected problems: path, line and a message fragment.
func TestProblems(t *testing.T) {
	type want struct {
		line int
		path string
		msg  string // substring of Problem.Msg
	}
	// A valid discord bot used by cases that test something else.
	okBot := []string{
		"bots:",
		"  - name: b",
		"    platform: discord",
		"    agent: coder",
		"    discord: {token: tok}",
	}
	withAgent := func(agentLines ...string) []byte {
		return src(append(append([]string{"agents:", "  coder:"}, agentLines...), okBot...)...)
	}
	withBot := func(botLines ...string) []byte {
		return src(append([]string{"agents:", "  coder: {}", "bots:"}, botLines...)...)
	}
	cases := []struct {
		name string
		data []byte
		env  map[string]string
		want []want
	}{
		// unknown keys at any depth
		{"unknown top-level key", src(append([]string{"datadir: ./x", "agents: {coder: {}}"}, okBot...)...), nil,
			[]want{{1, "datadir", "unknown key (valid keys: agents, bots, data_dir, delivery, handoff, http, limits, log, replicas, retention, schedules, status_delay, store, transcription, web)"}}},
		{"unknown log key", src(append([]string{"log:", "  lvl: debug", "agents: {coder: {}}"}, okBot...)...), nil,
			[]want{{2, "log.lvl", "unknown key"}}},
		{"unknown sandbox", withAgent("    sandbox: docker"), nil,
			[]want{{3, "agents.coder.sandbox", `unknown sandbox "docker" (want bwrap or none)`}}},
		{"sandbox bind without path", withAgent("    sandbox_binds:", "      - {mode: ro}"), nil,
			[]want{{4, "agents.coder.sandbox_binds[0].path", "path is required"}}},
		{"sandbox bind bad mode", withAgent("    sandbox_binds:", "      - {path: /srv/ref, mode: write}"), nil,
			[]want{{4, "agents.coder.sandbox_binds[0].mode", `unknown mode "write" (want ro or rw)`}}},
		{"sandbox bind of the root", withAgent("    sandbox_binds:", "      - path: /"), nil,
			[]want{{4, "agents.coder.sandbox_binds[0].path", "would show the whole machine"}}},
		{"unknown sandbox bind key", withAgent("    sandbox_binds:", "      - {path: /srv, mod: rw}"), nil,
			[]want{{4, "agents.coder.sandbox_binds[0].mod", "unknown key"}}},
		{"bad memory size", withAgent("    resources: {memory: 4 gigs}"), nil,
			[]want{{3, "agents.coder.resources.memory", `bad size "4 gigs"`}}},
		{"memory too small", withAgent("    resources: {memory: 1MiB}"), nil,
			[]want{{3, "agents.coder.resources.memory", "at least 256MiB"}}},
		{"too few processes", withAgent("    resources: {processes: 3}"), nil,
			[]want{{3, "agents.coder.resources.processes", "at least 16"}}},
		{"negative cpu", withAgent("    resources: {cpu: -1}"), nil,
			[]want{{3, "agents.coder.resources.cpu", "must not be negative"}}},
		{"unknown resources key", withAgent("    resources: {mem: 1G}"), nil,
			[]want{{3, "agents.coder.resources.mem", "unknown key (valid keys: cpu, memory, processes)"}}},
		{"unknown network mode", withAgent("    network: {mode: open}"), nil,
			[]want{{3, "agents.coder.network.mode", `unknown mode "open" (want proxy, host or none)`}}},
		{"network allow URL", withAgent("    network:", "      allow: [\"http://db:5432\"]"), nil,
			[]want{{4, "agents.coder.network.allow[0]", "not a URL"}}},
		{"network deny bad port", withAgent("    network:", "      deny: [\"example.com:http\"]"), nil,
			[]want{{4, "agents.coder.network.deny[0]", "the port must be 1-65535"}}},
		{"network allow bare wildcard", withAgent("    network:", "      allow: [\"*\"]"), nil,
			[]want{{4, "agents.coder.network.allow[0]", "want a host name, *.domain"}}},
		{"network none without a sandbox", withAgent("    sandbox: none", "    network: {mode: none}"), nil,
			[]want{{4, "agents.coder.network.mode", "network mode none needs a sandbox"}}},
		{"unknown agent_schedules", withAgent("    agent_schedules: sometimes"), nil,
			[]want{{3, "agents.coder.agent_schedules", `unknown agent_schedules "sometimes" (want ask, allow or off)`}}},
		{"unknown agent key", withAgent("    comand: claude"), nil,
			[]want{{3, "agents.coder.comand", "unknown key"}}},
		{"unknown rule key", withAgent("    rules:", "      - tool: Bash", "        acton: deny"), nil,
			[]want{{5, "agents.coder.rules[0].acton", "unknown key"}, {4, "agents.coder.rules[0].action", "action is required"}}},
		{"unknown bot key", withBot("  - name: b", "    platform: discord", "    agent: coder", "    discord: {token: t}", "    colour: red"), nil,
			[]want{{8, "bots[0].colour", "unknown key"}}},
		{"unknown slack key", withBot("  - name: b", "    platform: slack", "    agent: coder", "    slack:", "      bot_token: a", "      app_token: b", "      bot_tokn: c"), nil,
			[]want{{10, "bots[0].slack.bot_tokn", "unknown key (valid keys: api_url, app_token, bot_token)"}}},
		{"unknown access key", withBot("  - name: b", "    platform: whatsapp", "    agent: coder", "    access: {user: [x]}"), nil,
			[]want{{7, "bots[0].access.user", "unknown key"}}},

		// durations
		{"duration without unit", withAgent("    idle_timeout: 30"), nil,
			[]want{{3, "agents.coder.idle_timeout", `bad duration "30"`}}},
		{"duration garbage", withAgent("    approval_timeout: soon"), nil,
			[]want{{3, "agents.coder.approval_timeout", `bad duration "soon"`}}},
		{"negative duration", withAgent("    idle_timeout: -5m"), nil,
			[]want{{3, "agents.coder.idle_timeout", "must not be negative"}}},

		// wrong types
		{"agents is a list", src(append([]string{"agents:", "  - coder"}, okBot...)...), nil,
			[]want{{1, "agents", "want a mapping, got a list"}, {6, "bots[0].agent", `agent "coder" is not defined`}}},
		{"int is text", withAgent("    max_live: many"), nil,
			[]want{{3, "agents.coder.max_live", `want an integer, got "many"`}}},
		{"list is scalar", withAgent("    args: --verbose"), nil,
			[]want{{3, "agents.coder.args", "want a list of strings, got a scalar"}}},
		{"list item is mapping", withAgent("    allowed_tools:", "      - {name: Read}"), nil,
			[]want{{4, "agents.coder.allowed_tools[0]", "want a string, got a mapping"}}},
		{"bool is text", withAgent("    allow_bypass: yes"), nil,
			[]want{{3, "agents.coder.allow_bypass", `want true or false, got "yes"`}}},
		{"string is mapping", withAgent("    model: {name: opus}"), nil,
			[]want{{3, "agents.coder.model", "want a string, got a mapping"}}},
		{"env is list", withAgent("    env: [A, B]"), nil,
			[]want{{3, "agents.coder.env", "want a mapping, got a list"}}},
		{"bots is mapping", src("agents: {coder: {}}", "bots:", "  b: {}"), nil,
			[]want{{2, "bots", "want a list of bots, got a mapping"}}},
		{"bot is scalar", withBot("  - team"), nil,
			[]want{{4, "bots[0]", "want a mapping, got a scalar"}}},
		{"slack section is scalar", withBot("  - name: b", "    platform: slack", "    agent: coder", "    slack: xoxb-123"), nil,
			[]want{{7, "bots[0].slack", "want a mapping, got a scalar"}, {7, "bots[0].slack.app_token", "required for a slack bot"}, {7, "bots[0].slack.bot_token", "required for a slack bot"}}},
		{"top level is list", src("- a", "- b"), nil,
			[]want{{1, "", "the top level must be a mapping"}}},

		// platform sections and tokens
		{"slack missing app_token", withBot("  - name: b", "    platform: slack", "    agent: coder", "    slack:", "      bot_token: xoxb-1"), nil,
			[]want{{7, "bots[0].slack.app_token", "required for a slack bot"}}},
		{"slack missing both tokens", withBot("  - name: b", "    platform: slack", "    agent: coder", "    slack: {api_url: \"\"}"), nil,
			[]want{{7, "bots[0].slack.app_token", "required"}, {7, "bots[0].slack.bot_token", "required"}}},
		{"discord empty token", withBot("  - name: b", "    platform: discord", "    agent: coder", "    discord:", "      token: \"\""), nil,
			[]want{{8, "bots[0].discord.token", "required for a discord bot"}}},
		{"discord token from empty env", withBot("  - name: b", "    platform: discord", "    agent: coder", "    discord: {token: \"${DISCORD_BOT_TOKEN}\"}"),
			map[string]string{"DISCORD_BOT_TOKEN": ""},
			[]want{{7, "bots[0].discord.token", `is empty (from "${DISCORD_BOT_TOKEN}")`}}},
		{"discord block on slack bot", withBot("  - name: b", "    platform: slack", "    agent: coder", "    slack: {bot_token: a, app_token: b}", "    discord: {token: c}"), nil,
			[]want{{8, "bots[0].discord", "discord settings given for a slack bot"}}},
		{"slack block on whatsapp bot", withBot("  - name: b", "    platform: whatsapp", "    agent: coder", "    slack:", "      bot_token: a"), nil,
			[]want{{7, "bots[0].slack", "slack settings given for a whatsapp bot"}}},
		{"bad api_url", withBot("  - name: b", "    platform: discord", "    agent: coder", "    discord: {token: t, api_url: \"ftp://x\"}"), nil,
			[]want{{7, "bots[0].discord.api_url", `want an http(s) URL`}}},

		// bot identity
		{"agent not defined", withBot("  - name: b", "    platform: discord", "    agent: nope", "    discord: {token: t}"), nil,
			[]want{{6, "bots[0].agent", `agent "nope" is not defined`}}},
		{"no agent", withBot("  - name: b", "    platform: discord", "    discord: {token: t}"), nil,
			[]want{{4, "bots[0].agent", "agent is required"}}},
		{"duplicate bot names", withBot(
			"  - name: b", "    platform: discord", "    agent: coder", "    discord: {token: t}",
			"  - name: b", "    platform: discord", "    agent: coder", "    discord: {token: u}"), nil,
			[]want{{8, "bots[1].name", `duplicate bot name "b" (also used by bots[0] at line 4)`}}},
		{"empty bot name", withBot("  - name: \"\"", "    platform: discord", "    agent: coder", "    discord: {token: t}"), nil,
			[]want{{4, "bots[0].name", "bot name is required"}}},
		{"missing bot name", withBot("  - platform: discord", "    agent: coder", "    discord: {token: t}"), nil,
			[]want{{4, "bots[0].name", "bot name is required"}}},
		{"unknown platform", withBot("  - name: b", "    platform: telegram", "    agent: coder"), nil,
			[]want{{5, "bots[0].platform", `unknown platform "telegram" (want slack, discord, whatsapp or web)`}}},
		{"missing platform", withBot("  - name: b", "    agent: coder"), nil,
			[]want{{4, "bots[0].platform", "platform is required"}}},
		{"bad verbosity", withBot("  - name: b", "    platform: whatsapp", "    agent: coder", "    verbosity: loud"), nil,
			[]want{{7, "bots[0].verbosity", `unknown verbosity "loud" (want quiet, compact or full)`}}},
		{"empty access entry", withBot("  - name: b", "    platform: whatsapp", "    agent: coder", "    access:", "      users:", "        - \"\""), nil,
			[]want{{9, "bots[0].access.users[0]", "must not be empty"}}},

		// agents
		{"bypass without allow_bypass", withAgent("    permission_mode: bypassPermissions"), nil,
			[]want{{3, "agents.coder.permission_mode", "bypassPermissions requires allow_bypass: true"}}},
		{"unknown permission_mode", withAgent("    permission_mode: yolo"), nil,
			[]want{{3, "agents.coder.permission_mode", `unknown permission_mode "yolo" (want default, acceptEdits, plan or bypassPermissions)`}}},
		{"negative max_live", withAgent("    max_live: -1"), nil,
			[]want{{3, "agents.coder.max_live", "must be at least 1"}}},
		{"zero max_live", withAgent("    max_live: 0"), nil,
			[]want{{3, "agents.coder.max_live", "must be at least 1"}}},
		{"negative warm_spares", withAgent("    warm_spares: -1"), nil,
			[]want{{3, "agents.coder.warm_spares", "must not be negative"}}},
		{"warm_spares above max_live", withAgent("    max_live: 2", "    warm_spares: 3"), nil,
			[]want{{4, "agents.coder.warm_spares", "must be at most max_live (2)"}}},
		{"warm_spares is text", withAgent("    warm_spares: some"), nil,
			[]want{{3, "agents.coder.warm_spares", `want an integer, got "some"`}}},
		{"max_warm_spares without auto", withAgent("    warm_spares: 1", "    max_warm_spares: 3", "    spare_memory: 1GiB"), nil,
			[]want{{4, "agents.coder.max_warm_spares", "only applies with warm_spares: auto"},
				{5, "agents.coder.spare_memory", "only applies with warm_spares: auto"}}},
		{"max_warm_spares above max_live", withAgent("    warm_spares: auto", "    max_live: 2", "    max_warm_spares: 3"), nil,
			[]want{{5, "agents.coder.max_warm_spares", "must be at most max_live (2)"}}},
		{"max_warm_spares zero", withAgent("    warm_spares: auto", "    max_warm_spares: 0"), nil,
			[]want{{4, "agents.coder.max_warm_spares", "must be at least 1"}}},
		{"spare_memory bad", withAgent("    warm_spares: auto", "    spare_memory: lots"), nil,
			[]want{{4, "agents.coder.spare_memory", "bad size"}}},
		{"negative max_turns", withAgent("    max_turns: -3"), nil,
			[]want{{3, "agents.coder.max_turns", "must not be negative"}}},
		{"bad rule action", withAgent("    rules:", "      - {tool: Bash, action: maybe}"), nil,
			[]want{{4, "agents.coder.rules[0].action", `unknown action "maybe" (want allow, deny or ask)`}}},
		{"empty rule tool", withAgent("    rules:", "      - {tool: \"\", action: deny}"), nil,
			[]want{{4, "agents.coder.rules[0].tool", "tool is required"}}},
		{"missing rule tool", withAgent("    rules:", "      - action: deny"), nil,
			[]want{{4, "agents.coder.rules[0].tool", "tool is required"}}},
		{"bad rule pattern", withAgent("    rules:", "      - {tool: Bash, match: \"rm [a-\", action: deny}"), nil,
			[]want{{4, "agents.coder.rules[0].match", `bad pattern "rm [a-"`}}},
		{"rule is scalar", withAgent("    rules:", "      - Bash"), nil,
			[]want{{4, "agents.coder.rules[0]", "want a mapping, got a scalar"}}},
		{"empty agent name", src(append([]string{"agents:", "  \"\": {}", "  coder: {}"}, okBot...)...), nil,
			[]want{{2, "agents.", "agent name must not be empty"}}},
		{"bad env name", withAgent("    env:", "      BAD-NAME: x"), nil,
			[]want{{4, "agents.coder.env.BAD-NAME", "bad environment variable name"}}},

		// top level
		{"bad log level", src(append([]string{"log: {level: verbose}", "agents: {coder: {}}"}, okBot...)...), nil,
			[]want{{1, "log.level", `unknown log level "verbose" (want debug, info, warn or error)`}}},
		{"bad log format", src(append([]string{"log:", "  format: xml", "agents: {coder: {}}"}, okBot...)...), nil,
			[]want{{2, "log.format", `unknown log format "xml" (want text or json)`}}},
		{"bad http listen", src(append([]string{"http: {listen: localhost}", "agents: {coder: {}}"}, okBot...)...), nil,
			[]want{{1, "http.listen", "want host:port"}}},
		{"no bots key", src("agents: {coder: {}}"), nil,
			[]want{{1, "bots", "at least one bot is required"}}},
		{"empty bots list", src("agents: {coder: {}}", "", "bots: []"), nil,
			[]want{{3, "bots", "at least one bot is required"}}},
		{"empty document", src(""), nil,
			[]want{{1, "bots", "at least one bot is required"}}},

		// environment
		{"unset env var", withBot("  - name: b", "    platform: discord", "    agent: coder", "    discord: {token: \"${DISCORD_BOT_TOKEN}\"}"), nil,
			[]want{{7, "bots[0].discord.token", "environment variable DISCORD_BOT_TOKEN is not set"}}},
		{"unterminated reference", withAgent("    model: ${MODEL"), nil,
			[]want{{3, "agents.coder.model", `unterminated "${"`}}},
		{"bad variable name", withAgent("    model: ${1X}"), nil,
			[]want{{3, "agents.coder.model", `bad environment variable name "1X"`}}},

		// YAML structure
		{"duplicate key", withAgent("    model: a", "    model: b"), nil,
			[]want{{4, "agents.coder.model", "duplicate key (first defined at line 3)"}}},
		{"duplicate agent", src(append([]string{"agents:", "  coder: {}", "  coder: {}"}, okBot...)...), nil,
			[]want{{3, "agents.coder", "duplicate key (first defined at line 2)"}}},
		{"merge key", src(append([]string{"base: &b {model: x}", "agents:", "  coder:", "    <<: *b"}, okBot...)...), nil,
			[]want{{1, "base", "unknown key"}, {4, "agents.coder.<<", "merge keys"}}},
		{"syntax error", src("agents:", "  coder: {", "bots: ["), nil,
			[]want{{3, "", "invalid YAML"}}},
		{"tab indentation", src("agents:", "\tcoder: {}"), nil,
			[]want{{2, "", "invalid YAML"}}},
		{"tab indentation under an agent", src(append([]string{"agents:", "  coder:", "    model: x", "\tpermission_mode: default"}, okBot...)...), nil,
			[]want{{4, "", "invalid YAML"}}},
		{"mis-indented key under an agent", src(append([]string{"agents:", "  coder:", "    model: x", "   permission_mode: default"}, okBot...)...), nil,
			[]want{{4, "", "did not find expected key (indented unlike the lines above it)"}}},
		{"mis-indented env entry", src(append([]string{"agents:", "  coder:", "    env:", "      A: b", "     B: c"}, okBot...)...), nil,
			[]want{{5, "", "invalid YAML"}}},
		{"mis-indented list item", src(append([]string{"agents:", "  coder:", "    allowed_tools:", "    - Bash", "   - Read"}, okBot...)...), nil,
			[]want{{5, "", "invalid YAML"}}},
		{"two documents", src(append(append([]string{"agents: {coder: {}}"}, okBot...), "---", "agents: {}")...), nil,
			[]want{{7, "", "only one YAML document is allowed"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := problemsOf(t, tc.data, tc.env)
			ok := len(got) == len(tc.want)
			for _, w := range tc.want {
				if !slices.ContainsFunc(got, func(p decode.Problem) bool {
					return p.Line == w.line && p.Path == w.path && strings.Contains(p.Msg, w.msg)
				}) {
					ok = false
				}
			}
			if !ok {
				t.Errorf("problems:\n%s\nwant (line, path, msg fragment):\n%v\ninput:\n%s", fmtProblems(got), tc.want, tc.data)
			}
		})
	}
}

func fmtProblems(ps []decode.Problem) string {
	var b strings.Builder
	for _, p := range ps {
		b.WriteString("  " + p.String() + "\n")
	}
	return b.String()
}

// TestAllProblemsAtOnce: an unknown key and a missing agent in one file are
// both reported, in line order, with their lines, in Error()'s format.
func TestAllProblemsAtOnce(t *testing.T) {
	data := src(
		"agents:",
		"  coder:",
		"    idle_timout: 5m",
		"bots:",
		"  - name: team",
		"    platform: discord",
		"    agent: nope",
		"    discord: {token: t}",
	)
	_, err := Parse(data, "bridge.yaml", envOf(nil), testPlatforms)
	if err == nil {
		t.Fatal("Parse succeeded, want two problems")
	}
	want := "bridge.yaml:3: agents.coder.idle_timout: unknown key (valid keys: agent_schedules, allow_bypass, allowed_tools, append_system_prompt, approval_timeout, args, command, disallowed_tools, env, home, idle_timeout, kind, max_live, max_turns, max_warm_spares, mcp_servers, model, network, permission_mode, resources, rules, sandbox, sandbox_binds, spare_memory, warm_spares, workdir, worktree): did you mean \"idle_timeout\"?\n" +
		`bridge.yaml:7: bots[0].agent: agent "nope" is not defined`
	if err.Error() != want {
		t.Errorf("error:\n%s\nwant:\n%s", err, want)
	}
}

// TestManyProblemsAcrossSections: problems from the decoder and from
// validation are merged and sorted by line.
func TestManyProblemsAcrossSections(t *testing.T) {
	data := src(
		"log: {level: loud}",                  // 1
		"agents:",                             // 2
		"  coder:",                            // 3
		"    max_live: -2",                    // 4
		"    idle_timeout: 1x",                // 5
		"bots:",                               // 6
		"  - name: a",                         // 7
		"    platform: slack",                 // 8
		"    agent: coder",                    // 9
		"    slack: {bot_token: \"${NOPE}\"}", // 10
		"  - name: a",                         // 11
		"    platform: pager",                 // 12
	)
	got := problemsOf(t, data, nil)
	var lines []int
	for _, p := range got {
		lines = append(lines, p.Line)
	}
	// 10 has the unset variable and the missing app_token; 11 the
	// duplicate name and (reported on the bot's first line) the missing
	// agent; 12 the unknown platform.
	want := []int{1, 4, 5, 10, 10, 11, 11, 12}
	if !slices.Equal(lines, want) {
		t.Errorf("lines %v, want %v; problems:\n%s", lines, want, fmtProblems(got))
	}
	t.Logf("problems:\n%s", fmtProblems(got))
}
