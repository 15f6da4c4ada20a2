package schedreq

import "testing"

func TestParseAdd(t *testing.T) {
	tests := []struct {
		in               string
		cron, tz, prompt string
		ok               bool
	}{
		{`"0 9 * * 1-5" summarise CI`, "0 9 * * 1-5", "", "summarise CI", true},
		{`"0 9 * * 1-5" tz=Europe/Berlin summarise "the" CI`, "0 9 * * 1-5", "Europe/Berlin", `summarise "the" CI`, true},
		{`“*/30 * * * *” smart quotes`, "*/30 * * * *", "", "smart quotes", true},
		{`@daily check`, "@daily", "", "check", true},
		{`"0 9 * * *"`, "", "", "", false},
		{`"0 9 * * * unterminated`, "", "", "", false},
		{`0 9 * * * unquoted`, "", "", "", false},
		{``, "", "", "", false},
	}
	for _, tc := range tests {
		cron, tz, prompt, ok := ParseAdd(tc.in)
		if ok != tc.ok || ok && (cron != tc.cron || tz != tc.tz || prompt != tc.prompt) {
			t.Errorf("ParseAdd(%q) = %q %q %q %v, want %q %q %q %v", tc.in, cron, tz, prompt, ok, tc.cron, tc.tz, tc.prompt, tc.ok)
		}
	}
}
