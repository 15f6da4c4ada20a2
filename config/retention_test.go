package config

import (
	"strings"
	"testing"
	"time"
)

// withRetention is the minimal config with the given retention line(s)
// appended at line 5.
func withRetention(lines ...string) []byte {
	return src(append([]string{
		"agents:",
		"  coder:",
		"bots:",
		"  - {name: phone, platform: whatsapp, agent: coder}",
	}, lines...)...)
}

func TestRetentionValues(t *testing.T) {
	cases := []struct {
		name string
		line string // "" = key absent
		env  map[string]string
		want time.Duration
	}{
		{"absent: 90 days", "", nil, 90 * 24 * time.Hour},
		{"null: 90 days", "retention:", nil, 90 * 24 * time.Hour},
		{"days", "retention: 30d", nil, 30 * 24 * time.Hour},
		{"one day", "retention: 1d", nil, 24 * time.Hour},
		{"days and a duration", "retention: 1d12h", nil, 36 * time.Hour},
		{"hours", "retention: 36h", nil, 36 * time.Hour},
		{"exactly a day in hours", "retention: 24h", nil, 24 * time.Hour},
		{"zero keeps everything", "retention: 0", nil, 0},
		{"zero days", "retention: 0d", nil, 0},
		{"from the environment", "retention: ${RETENTION:-7d}", nil, 7 * 24 * time.Hour},
		{"quoted", `retention: "365d"`, nil, 365 * 24 * time.Hour},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var data []byte
			if tc.line == "" {
				data = withRetention()
			} else {
				data = withRetention(tc.line)
			}
			c := mustParse(t, data, tc.env)
			if c.Retention != tc.want {
				t.Errorf("Retention = %v, want %v", c.Retention, tc.want)
			}
		})
	}
}

func TestRetentionProblems(t *testing.T) {
	cases := []struct {
		name string
		line string
		msg  string
	}{
		{"minutes typo", "retention: 90m", `"90m" is shorter than a day`},
		{"an hour", "retention: 1h", "want at least 1d, i.e. 24h, or 0"},
		{"no unit", "retention: 90", `bad retention "90" (want days such as "90d"`},
		{"negative days", "retention: -5d", `bad retention "-5d"`},
		{"negative hours", "retention: -48h", `bad retention "-48h"`},
		{"fractional days", "retention: 1.5d", `bad retention "1.5d"`},
		{"words", "retention: forever", `bad retention "forever"`},
		{"bad rest after days", "retention: 2dx", `bad retention "2dx"`},
		{"too many days", "retention: 999999999d", `bad retention "999999999d"`},
		{"a list", "retention: [90d]", "want a duration, got a list"},
		{"a mapping", "retention: {days: 90}", "want a duration, got a mapping"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := problemsOf(t, withRetention(tc.line), nil)
			if len(got) != 1 {
				t.Fatalf("got %d problems, want 1:\n%s", len(got), fmtProblems(got))
			}
			p := got[0]
			if p.Line != 5 || p.Path != "retention" || !strings.Contains(p.Msg, tc.msg) {
				t.Errorf("problem = %s; want line 5, path retention, message containing %q", p, tc.msg)
			}
		})
	}
}

// TestRetentionProblemHidesEnvValue: a bad value taken from the environment
// is reported as written, not expanded.
func TestRetentionProblemHidesEnvValue(t *testing.T) {
	got := problemsOf(t, withRetention("retention: ${KEEP}"), map[string]string{"KEEP": "secret-ish"})
	if len(got) != 1 || strings.Contains(got[0].Msg, "secret-ish") || !strings.Contains(got[0].Msg, "${KEEP}") {
		t.Errorf("problems = %s; want one naming ${KEEP} without its value", fmtProblems(got))
	}
}

func TestRetentionSummary(t *testing.T) {
	for _, tc := range []struct{ line, want string }{
		{"retention: 90d", "retention: 90d\n"},
		{"retention: 36h", "retention: 36h\n"},
		{"retention: 0", "retention: off (keep everything)\n"},
	} {
		if s := mustParse(t, withRetention(tc.line), nil).Summary(); !strings.Contains(s, tc.want) {
			t.Errorf("%s: summary lacks %q:\n%s", tc.line, tc.want, s)
		}
	}
}
