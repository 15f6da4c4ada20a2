package slack

import (
	"strings"
	"testing"

	"github.com/agentbridge/agentbridge/config/configtest"
)

// TestConfigProblems: bots[].slack is checked with its lines, the
// messages config had before the settings moved here.
func TestConfigProblems(t *testing.T) {
	bot := []string{"bots:", "  - name: b", "    platform: slack", "    agent: coder"}
	cases := []struct {
		name  string
		lines []string
		env   map[string]string
		want  []string // "line path: message"
	}{
		{"section missing", nil, nil, []string{"4 bots[0].slack: slack settings are required for a slack bot (bot_token, app_token)"}},
		{"section is scalar", []string{"    slack: xoxb-123"}, nil, []string{
			"7 bots[0].slack: want a mapping, got a scalar",
			"7 bots[0].slack.app_token: required for a slack bot",
			"7 bots[0].slack.bot_token: required for a slack bot"}},
		{"missing app_token", []string{"    slack:", "      bot_token: xoxb-1"}, nil, []string{"7 bots[0].slack.app_token: required for a slack bot"}},
		{"unknown key", []string{"    slack:", "      bot_token: a", "      app_token: b", "      bot_tokn: c"}, nil,
			[]string{"10 bots[0].slack.bot_tokn: unknown key (valid keys: api_url, app_token, bot_token): did you mean \"bot_token\"?"}},
		{"empty token from env", []string{`    slack: {bot_token: "${T}", app_token: b}`}, map[string]string{"T": ""},
			[]string{`7 bots[0].slack.bot_token: is empty (from "${T}"); required for a slack bot`}},
		{"bad api_url", []string{`    slack: {bot_token: a, app_token: b, api_url: "slack.com/api"}`}, nil,
			[]string{`7 bots[0].slack.api_url: want an http(s) URL such as "https://slack.com/api/", got "slack.com/api"`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, ps := configtest.Parse(tc.env, Platform(), append(append([]string{}, bot...), tc.lines...)...)
			configtest.WantProblems(t, ps, tc.want)
		})
	}
}

// TestConfigDefaults: the settings of a Slack bot, with api_url defaulted
// or given a trailing slash, and in check-config's summary without tokens.
func TestConfigDefaults(t *testing.T) {
	c, ps := configtest.Parse(nil, Platform(), "bots:",
		"  - {name: a, platform: slack, agent: coder, slack: {bot_token: xoxb-1, app_token: xapp-1}}",
		`  - {name: b, platform: slack, agent: coder, slack: {bot_token: xoxb-1, app_token: xapp-1, api_url: "http://127.0.0.1:1/api"}}`)
	if ps != nil {
		t.Fatalf("problems: %v", ps)
	}
	a, b := c.Bots[0].Settings.(*Config), c.Bots[1].Settings.(*Config)
	if *a != (Config{BotToken: "xoxb-1", AppToken: "xapp-1", APIURL: DefaultAPIURL}) || b.APIURL != "http://127.0.0.1:1/api/" {
		t.Errorf("settings %#v, %#v", a, b)
	}
	if s := c.Summary(); !strings.Contains(s, "platform=slack") || !strings.Contains(s, " api_url=https://slack.com/api/\n") || strings.Contains(s, "xoxb-1") {
		t.Errorf("summary:\n%s", s)
	}
}

// TestScheduleTargets: Slack schedules name a channel id, and a thread by
// its ts.
func TestScheduleTargets(t *testing.T) {
	bots := []string{"bots:", "  - {name: b, platform: slack, agent: coder, slack: {bot_token: a, app_token: b}}", "schedules:"}
	for _, tc := range []struct{ target, want string }{
		{`channel: C0123`, ""},
		{`conversation: "C0123/1712345678.000100"`, ""},
		{`channel: "#general"`, `unknown channel format "#general" for a slack bot: want a Slack channel id such as C0123ABCD (not a #name)`},
		{`conversation: "C0999/yesterday"`, `unknown channel format "C0999" for a slack bot: want the thread's ts after the slash, such as 1712345678.000100`},
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
