package config

import (
	"strings"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/config/decode"
)

func TestDeliveryGiveUpAfterValues(t *testing.T) {
	cases := []struct {
		name  string
		lines []string // none = key absent
		want  time.Duration
	}{
		{"absent: 24h", nil, 24 * time.Hour},
		{"section null: 24h", []string{"delivery:"}, 24 * time.Hour},
		{"key null: 24h", []string{"delivery:", "  give_up_after:"}, 24 * time.Hour},
		{"hours", []string{"delivery: {give_up_after: 36h}"}, 36 * time.Hour},
		{"days", []string{"delivery: {give_up_after: 2d}"}, 48 * time.Hour},
		{"the minimum", []string{"delivery: {give_up_after: 1m}"}, time.Minute},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := mustParse(t, withRetention(tc.lines...), nil)
			if c.Delivery.GiveUpAfter != tc.want {
				t.Errorf("GiveUpAfter = %v, want %v", c.Delivery.GiveUpAfter, tc.want)
			}
			if !strings.Contains(c.Summary(), "delivery: give_up_after="+decode.DurOr(tc.want, "0")+"\n") {
				t.Errorf("summary lacks the delivery line:\n%s", c.Summary())
			}
		})
	}
}

func TestDeliveryGiveUpAfterProblems(t *testing.T) {
	cases := []struct{ name, line, path, msg string }{
		{"no unit", "delivery: {give_up_after: 24}", "delivery.give_up_after", `bad duration "24"`},
		{"zero", "delivery: {give_up_after: 0}", "delivery.give_up_after", "shorter than 1m"},
		{"too short", "delivery: {give_up_after: 30s}", "delivery.give_up_after", "shorter than 1m"},
		{"negative", "delivery: {give_up_after: -1h}", "delivery.give_up_after", "bad duration"},
		{"a list", "delivery: {give_up_after: [1h]}", "delivery.give_up_after", "want a duration, got a list"},
		{"unknown key", "delivery: {retries: 5}", "delivery.retries", "unknown"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := problemsOf(t, withRetention(tc.line), nil)
			if len(got) != 1 {
				t.Fatalf("got %d problems, want 1:\n%s", len(got), fmtProblems(got))
			}
			if p := got[0]; p.Line != 5 || p.Path != tc.path || !strings.Contains(p.Msg, tc.msg) {
				t.Errorf("problem = %s; want line 5, path %s, message containing %q", p, tc.path, tc.msg)
			}
		})
	}
}
