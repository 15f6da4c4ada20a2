package discord

import (
	"strings"
	"testing"

	"github.com/agentbridge/agentbridge/config/configtest"
)

// TestConfigProblems: bots[].discord is checked with its lines, the
// messages config had before the settings moved here.
func TestConfigProblems(t *testing.T) {
	bot := []string{"bots:", "  - name: b", "    platform: discord", "    agent: coder"}
	cases := []struct {
		name  string
		lines []string
		env   map[string]string
		want  []string // "line path: message"
	}{
		{"section missing", nil, nil, []string{"4 bots[0].discord: discord settings are required for a discord bot (token)"}},
		{"empty token", []string{"    discord:", "      token: \"\""}, nil, []string{"8 bots[0].discord.token: required for a discord bot"}},
		{"token from empty env", []string{`    discord: {token: "${DISCORD_BOT_TOKEN}"}`}, map[string]string{"DISCORD_BOT_TOKEN": ""},
			[]string{`7 bots[0].discord.token: is empty (from "${DISCORD_BOT_TOKEN}"); required for a discord bot`}},
		{"unset env", []string{`    discord: {token: "${DISCORD_BOT_TOKEN}"}`}, nil,
			[]string{"7 bots[0].discord.token: environment variable DISCORD_BOT_TOKEN is not set (write ${DISCORD_BOT_TOKEN:-default} to make it optional)"}},
		{"bad api_url", []string{`    discord: {token: t, api_url: "ftp://x"}`}, nil,
			[]string{`7 bots[0].discord.api_url: want an http(s) URL such as "https://discord.com/api/v9/", got "ftp://x"`}},
		{"unknown key", []string{`    discord: {token: t, colour: red}`}, nil,
			[]string{"7 bots[0].discord.colour: unknown key (valid keys: api_url, token)"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, ps := configtest.Parse(tc.env, Platform(), append(append([]string{}, bot...), tc.lines...)...)
			configtest.WantProblems(t, ps, tc.want)
		})
	}
}

// TestConfigDefaults: the settings of a Discord bot, with api_url
// defaulted or given a trailing slash, and in check-config's summary
// without the token.
func TestConfigDefaults(t *testing.T) {
	c, ps := configtest.Parse(nil, Platform(), "bots:",
		"  - {name: a, platform: discord, agent: coder, discord: {token: tok-1}}",
		`  - {name: b, platform: discord, agent: coder, discord: {token: tok-1, api_url: "http://127.0.0.1:1/api/v9"}}`)
	if ps != nil {
		t.Fatalf("problems: %v", ps)
	}
	a, b := c.Bots[0].Settings.(*Config), c.Bots[1].Settings.(*Config)
	if *a != (Config{Token: "tok-1", APIURL: DefaultAPIURL}) || b.APIURL != "http://127.0.0.1:1/api/v9/" {
		t.Errorf("settings %#v, %#v", a, b)
	}
	if s := c.Summary(); !strings.Contains(s, " api_url=https://discord.com/api/v9/\n") || strings.Contains(s, "tok-1") {
		t.Errorf("summary:\n%s", s)
	}
}

// TestScheduleTargets: Discord schedules name channels and threads by id.
func TestScheduleTargets(t *testing.T) {
	bots := []string{"bots:", "  - {name: b, platform: discord, agent: coder, discord: {token: t}}", "schedules:"}
	for _, tc := range []struct{ target, want string }{
		{`channel: "900000000000000002"`, ""},
		{`conversation: "900000000000000002/900000000000000009"`, ""},
		{`channel: general`, `unknown channel format "general" for a discord bot: want a Discord channel id (digits; not a #name)`},
		{`conversation: "900000000000000002/x"`, `unknown channel format "900000000000000002" for a discord bot: want the thread's id (digits) after the slash`},
	} {
		_, ps := configtest.Parse(nil, Platform(), append(bots, `  - {name: s, bot: b, cron: "@daily", prompt: x, `+tc.target+`}`)...)
		switch {
		case tc.want == "" && ps != nil:
			t.Errorf("%s: %v", tc.target, ps)
		case tc.want != "" && (len(ps) != 1 || ps[0].Line != 6 || ps[0].Msg != tc.want):
			t.Errorf("%s: problems %v, want one at line 6: %s", tc.target, ps, tc.want)
		}
	}
}
