package config

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/config/decode"
)

// scheduleDoc is a valid config with a Slack, a Discord and a WhatsApp bot
// (the Slack one limited to two channels) followed by schedule lines.
// The first schedule line is line 21.
func scheduleDoc(lines ...string) []byte {
	return src(append([]string{
		"agents:",
		"  coder: {}",
		"  reviewer: {}",
		"bots:",
		"  - name: team",
		"    platform: slack",
		"    agent: coder",
		"    slack: {bot_token: a, app_token: b}",
		"    access: {channels: [C0123, C0456]}",
		"  - name: guild",
		"    platform: discord",
		"    agent: coder",
		"    discord: {token: t}",
		"  - name: phone",
		"    platform: whatsapp",
		"    agent: coder",
		"  - name: open",
		"    platform: slack",
		"    agent: reviewer",
		"    slack: {bot_token: a, app_token: b}",
	}, lines...)...)
}

func TestSchedulesParse(t *testing.T) {
	c, err := Parse(scheduleDoc(
		"schedules:",
		`  - { name: standup, bot: team, channel: C0123, cron: "0 9 * * 1-5", tz: Europe/Berlin,`,
		`      prompt: "Summarise yesterday's failed CI runs", new_thread: true }`,
		`  - { name: nightly, bot: guild, conversation: "900000000000000002/900000000000000009", cron: "@daily", prompt: check, catch_up: false }`,
		`  - { name: ping, bot: phone, channel: "+15551234567", cron: "*/30 * * * *", tz: UTC, prompt: hi, agent: reviewer }`,
	), "bridge.yaml", envOf(nil), testPlatforms)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Schedules) != 3 {
		t.Fatalf("got %d schedules", len(c.Schedules))
	}
	s := c.Schedules[0]
	if s.Name != "standup" || s.Bot != "team" || s.Channel != "C0123" || s.Thread != "" || !s.NewThread || !s.CatchUp ||
		s.Agent != "coder" || s.Cron.Zone != "Europe/Berlin" || s.Prompt != "Summarise yesterday's failed CI runs" {
		t.Errorf("standup = %+v", s)
	}
	// Friday 2026-01-02 10:00 Berlin → next run Monday 09:00 Berlin.
	berlin, _ := time.LoadLocation("Europe/Berlin")
	if got, want := s.Cron.Next(time.Date(2026, 1, 2, 10, 0, 0, 0, berlin)), time.Date(2026, 1, 5, 9, 0, 0, 0, berlin); !got.Equal(want) {
		t.Errorf("next = %v, want %v", got, want)
	}
	if n := c.Schedules[1]; n.Channel != "900000000000000002" || n.Thread != "900000000000000009" || n.CatchUp || n.NewThread {
		t.Errorf("nightly = %+v", n)
	}
	// The channel as stored is the platform's to normalize (a WhatsApp phone
	// number becomes a chat id: bridges/adapters/whatsapp's tests).
	if p := c.Schedules[2]; p.Channel != "+15551234567" || p.Agent != "reviewer" {
		t.Errorf("ping = %+v", p)
	}
}

// TestScheduleProblems: every schedule rule is reported with its line.
func TestScheduleProblems(t *testing.T) {
	type want struct {
		line int
		path string
		msg  string
	}
	cases := []struct {
		name  string
		lines []string
		want  []want
	}{
		{"bad cron", []string{"schedules:", `  - {name: a, bot: team, channel: C0123, cron: "0 9 * *", prompt: x}`},
			[]want{{22, "schedules[0].cron", `bad cron expression "0 9 * *"`}}},
		{"cron out of range", []string{"schedules:", "  - name: a", "    bot: team", "    channel: C0123", `    cron: "61 * * * *"`, "    prompt: x"},
			[]want{{25, "schedules[0].cron", "bad cron expression"}}},
		{"zone in the expression", []string{"schedules:", `  - {name: a, bot: team, channel: C0123, cron: "CRON_TZ=UTC 0 9 * * *", prompt: x}`},
			[]want{{22, "schedules[0].cron", "time zone separately"}}},
		{"unknown time zone", []string{"schedules:", "  - name: a", "    bot: team", "    channel: C0123", `    cron: "0 9 * * *"`, "    tz: Mars/Olympus", "    prompt: x"},
			[]want{{26, "schedules[0].tz", `unknown time zone "Mars/Olympus"`}}},
		{"unknown bot", []string{"schedules:", "  - name: a", "    bot: nobody", "    channel: C0123", `    cron: "0 9 * * *"`, "    prompt: x"},
			[]want{{23, "schedules[0].bot", `bot "nobody" is not defined`}}},
		{"conversation without thread", []string{"schedules:", `  - {name: a, bot: open, conversation: C0999, cron: "0 9 * * *", prompt: x}`},
			[]want{{22, "schedules[0].conversation", `want "CHANNEL/THREAD"`}}},
		{"channel outside the access list", []string{"schedules:", `  - {name: a, bot: team, channel: C0999, cron: "0 9 * * *", prompt: x}`},
			[]want{{22, "schedules[0].channel", "not in the access.channels of bot"}}},
		{"channel and conversation", []string{"schedules:", `  - {name: a, bot: open, channel: C0999, conversation: "C0999/1.2", cron: "0 9 * * *", prompt: x}`},
			[]want{{22, "schedules[0].conversation", "not both"}}},
		{"new thread in a conversation", []string{"schedules:", `  - {name: a, bot: open, conversation: "C0999/1.2", new_thread: true, cron: "0 9 * * *", prompt: x}`},
			[]want{{22, "schedules[0].new_thread", "cannot be used with conversation"}}},
		{"missing fields", []string{"schedules:", "  - {bot: team}"},
			[]want{{22, "schedules[0].name", "name is required"}, {22, "schedules[0].prompt", "prompt is required"},
				{22, "schedules[0].cron", "cron is required"}, {22, "schedules[0].channel", "channel (or conversation"}}},
		{"duplicate names and unknown agent", []string{"schedules:",
			`  - {name: a, bot: open, channel: C1AA, cron: "@hourly", prompt: x}`,
			`  - {name: a, bot: open, channel: C1AA, cron: "@hourly", prompt: x, agent: ghost}`},
			[]want{{23, "schedules[1].name", `duplicate schedule name "a"`}, {23, "schedules[1].agent", `agent "ghost" is not defined`}}},
		{"unknown key", []string{"schedules:", "  - name: a", "    bot: open", "    channel: C1AA", `    cron: "@hourly"`, "    prompt: x", "    every: day"},
			[]want{{27, "schedules[0].every", "unknown key"}}},
		{"bad new_thread", []string{"schedules:", `  - {name: a, bot: open, channel: C1AA, cron: "@hourly", prompt: x, new_thread: sometimes}`},
			[]want{{22, "schedules[0].new_thread", "want true or false"}}},
		{"not a list", []string{"schedules: daily"},
			[]want{{21, "schedules", "want a list of schedules"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := problemsOf(t, scheduleDoc(tc.lines...), nil)
			ok := len(got) == len(tc.want)
			for _, w := range tc.want {
				if !slices.ContainsFunc(got, func(p decode.Problem) bool {
					return p.Line == w.line && p.Path == w.path && strings.Contains(p.Msg, w.msg)
				}) {
					ok = false
				}
			}
			if !ok {
				t.Errorf("problems:\n%s\nwant (line, path, msg fragment):\n%v", fmtProblems(got), tc.want)
			}
		})
	}
}

// TestExampleScheduleBlock: the commented-out schedule of the example is
// valid once uncommented.
func TestExampleScheduleBlock(t *testing.T) {
	ex := strings.Replace(string(Example()), "schedules: []\n", "schedules:\n", 1)
	lines := strings.Split(ex, "\n")
	in := false
	for i, l := range lines {
		switch {
		case strings.HasPrefix(l, "schedules:"):
			in = true
		case strings.TrimSpace(l) == "":
			in = false
		case in && strings.HasPrefix(l, "#  "):
			lines[i] = strings.TrimPrefix(l, "#")
		}
	}
	c := mustParse(t, []byte(strings.Join(lines, "\n")), exampleEnv)
	if len(c.Schedules) != 1 || c.Schedules[0].Name != "standup" || !c.Schedules[0].NewThread || c.Schedules[0].Cron.Zone != "Europe/Berlin" {
		t.Fatalf("uncommented schedules = %+v", c.Schedules)
	}
}
