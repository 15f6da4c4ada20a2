package core

import (
	"slices"
	"testing"
)

// TestParseCommandLine: one tokenisation for every command; lines with
// unusual spaces or invisible characters that name a command are refused
// whole; anything else is an ordinary message.
func TestParseCommandLine(t *testing.T) {
	tests := []struct {
		in   string
		want cmdParse
		name string
		args []string
	}{
		{"!help", commandOK, "help", nil},
		{"  !MODEL  claude-sonnet ", commandOK, "model", []string{"claude-sonnet"}},
		{"!mode acceptEdits", commandOK, "mode", []string{"acceptEdits"}},
		{"!rules rm 1", commandOK, "rules", []string{"rm", "1"}},
		{"!rules\nrm\n1\r\n", commandOK, "rules", []string{"rm", "1"}},
		{"!important: read this", notCommand, "", nil},
		{"hello !stop", notCommand, "", nil},
		{"", notCommand, "", nil},     // a voice note or file without text (panicked)
		{" \n ", notCommand, "", nil}, // likewise
		{"!stopper", notCommand, "", nil},
		{"!rules rm\u00a01", commandRefused, "rules", nil},
		{"!rules rm\t1", commandRefused, "rules", nil},
		{"!rules\u3000rm 1", commandRefused, "rules", nil},
		{"!rules rm\u200b1", commandRefused, "rules", nil},
		{"!ru\u200bles rm 1", commandRefused, "rules", nil},
		{"\u00a0!mode plan", commandRefused, "mode", nil},
		{"\ufeff!mode plan", commandRefused, "mode", nil},
		{"!mode plan\u2060", commandRefused, "mode", nil},
		{"!mode\u202eplan", commandRefused, "mode", nil},
		{"!mode\u200bplan", commandRefused, "mode", nil},
		{"!mode\u2028plan", commandRefused, "mode", nil},
		{"!mode\rplan", commandRefused, "mode", nil},
		{"!schedule add \"0 9 * * *\" say\thi", commandRefused, "schedule", nil},
		{"!nothing\tat all", notCommand, "", nil},
		{"tab\tin a message", notCommand, "", nil},
	}
	for _, tt := range tests {
		l, p := parseCommandLine(tt.in)
		if p != tt.want || l.name != tt.name || tt.want == commandOK && !slices.Equal(l.args, tt.args) {
			t.Errorf("parseCommandLine(%q) = %+v %v, want %v %q %q", tt.in, l, p, tt.want, tt.name, tt.args)
		}
	}
	l, _ := parseCommandLine("!schedule add \"0 9 * * 1-5\" tz=UTC  summarise\nthe day ")
	if got := l.after(1); got != "\"0 9 * * 1-5\" tz=UTC  summarise\nthe day" {
		t.Errorf("after(1) = %q", got)
	}
	if got := l.after(12); got != "" {
		t.Errorf("after(12) = %q", got)
	}
}
