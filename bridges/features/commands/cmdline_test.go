package commands

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
		want Parsed
		name string
		args []string
	}{
		{"!help", OK, "help", nil},
		{"  !MODEL  claude-sonnet ", OK, "model", []string{"claude-sonnet"}},
		{"!mode acceptEdits", OK, "mode", []string{"acceptEdits"}},
		{"!rules rm 1", OK, "rules", []string{"rm", "1"}},
		{"!rules\nrm\n1\r\n", OK, "rules", []string{"rm", "1"}},
		{"!important: read this", NotCommand, "", nil},
		{"hello !stop", NotCommand, "", nil},
		{"", NotCommand, "", nil},     // a voice note or file without text (panicked)
		{" \n ", NotCommand, "", nil}, // likewise
		{"!stopper", NotCommand, "", nil},
		{"!rules rm\u00a01", Refused, "rules", nil},
		{"!rules rm\t1", Refused, "rules", nil},
		{"!rules\u3000rm 1", Refused, "rules", nil},
		{"!rules rm\u200b1", Refused, "rules", nil},
		{"!ru\u200bles rm 1", Refused, "rules", nil},
		{"\u00a0!mode plan", Refused, "mode", nil},
		{"\ufeff!mode plan", Refused, "mode", nil},
		{"!mode plan\u2060", Refused, "mode", nil},
		{"!mode\u202eplan", Refused, "mode", nil},
		{"!mode\u200bplan", Refused, "mode", nil},
		{"!mode\u2028plan", Refused, "mode", nil},
		{"!mode\rplan", Refused, "mode", nil},
		{"!schedule add \"0 9 * * *\" say\thi", Refused, "schedule", nil},
		{"!nothing\tat all", NotCommand, "", nil},
		{"tab\tin a message", NotCommand, "", nil},
	}
	for _, tt := range tests {
		l, p := testTable.Parse(tt.in)
		if p != tt.want || l.Name != tt.name || tt.want == OK && !slices.Equal(l.Args, tt.args) {
			t.Errorf("testTable.Parse(%q) = %+v %v, want %v %q %q", tt.in, l, p, tt.want, tt.name, tt.args)
		}
	}
	l, _ := testTable.Parse("!schedule add \"0 9 * * 1-5\" tz=UTC  summarise\nthe day ")
	if got := l.After(1); got != "\"0 9 * * 1-5\" tz=UTC  summarise\nthe day" {
		t.Errorf("After(1) = %q", got)
	}
	if got := l.After(12); got != "" {
		t.Errorf("After(12) = %q", got)
	}
}
