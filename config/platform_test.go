package config

import (
	"slices"
	"testing"
)

// fileSettings are settings that keep a credential in a file.
type fileSettings struct{ file string }

func (s fileSettings) String() string        { return "file" }
func (s fileSettings) Summary() string       { return "" }
func (s fileSettings) SecretFiles() []string { return []string{s.file} }

// TestBotSecretFiles: a bot's secret files are what its settings name
// (SecretFiler); settings without files and bots without settings have
// none. The core hides these files from every agent.
func TestBotSecretFiles(t *testing.T) {
	cases := []struct {
		bot  Bot
		want []string
	}{
		{Bot{Settings: fileSettings{"/var/lib/wa/phone.db"}}, []string{"/var/lib/wa/phone.db"}},
		{Bot{Settings: stubSettings{}}, nil},
		{Bot{}, nil},
	}
	for _, tc := range cases {
		if got := tc.bot.SecretFiles(); !slices.Equal(got, tc.want) {
			t.Errorf("%v.SecretFiles() = %q, want %q", tc.bot, got, tc.want)
		}
	}
}
