package config

import (
	"strings"
	"testing"
	"time"
)

func TestStatusDelayValues(t *testing.T) {
	cases := []struct {
		name string
		line string // "" = key absent
		want time.Duration
	}{
		{"absent: 1s", "", time.Second},
		{"null: 1s", "status_delay:", time.Second},
		{"zero: at once", "status_delay: 0", 0},
		{"milliseconds", "status_delay: 1500ms", 1500 * time.Millisecond},
		{"the maximum", "status_delay: 10m", 10 * time.Minute},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var data []byte
			if tc.line == "" {
				data = withRetention()
			} else {
				data = withRetention(tc.line)
			}
			if c := mustParse(t, data, nil); c.StatusDelay != tc.want {
				t.Errorf("StatusDelay = %v, want %v", c.StatusDelay, tc.want)
			}
		})
	}
}

func TestStatusDelayProblems(t *testing.T) {
	cases := []struct{ name, line, msg string }{
		{"no unit", "status_delay: 2", `bad duration "2"`},
		{"negative", "status_delay: -1s", "must not be negative"},
		{"too long", "status_delay: 11m", "longer than 10m0s"},
		{"a list", "status_delay: [1s]", "want a duration, got a list"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := problemsOf(t, withRetention(tc.line), nil)
			if len(got) != 1 {
				t.Fatalf("got %d problems, want 1:\n%s", len(got), fmtProblems(got))
			}
			if p := got[0]; p.Line != 5 || p.Path != "status_delay" || !strings.Contains(p.Msg, tc.msg) {
				t.Errorf("problem = %s; want line 5, path status_delay, message containing %q", p, tc.msg)
			}
		})
	}
}
