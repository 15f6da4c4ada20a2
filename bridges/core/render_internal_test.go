package core

import (
	"slices"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/bridges/render"
	"github.com/agentbridge/agentbridge/config"
)

func TestTurnFinal(t *testing.T) {
	tr := newTurn(time.Now())
	tr.addDelta("Let me ")
	tr.addDelta("check.")
	tr.addText("Let me check.")
	tr.addTool(streamjson.ToolUse{ID: "1", Name: "Bash"}, "› `Bash: ls`")
	tr.addDelta("Done: 3 files.")
	activity, answer := tr.final("Done: 3 files.")
	if answer != "Done: 3 files." || render.Join(activity) != "Let me check.\n\n› `Bash: ls`" {
		t.Errorf("final = %q / %q", render.Join(activity), answer)
	}
	_, answer = tr.final("")
	if answer != "Done: 3 files." {
		t.Errorf("empty result text should fall back to the last block: %q", answer)
	}
}

// fileSettings stands in for the settings of an adapter that keeps a
// bot's credentials in a file (a WhatsApp device store).
type fileSettings struct{ file string }

func (s fileSettings) String() string        { return "files{" + s.file + "}" }
func (s fileSettings) Summary() string       { return "" }
func (s fileSettings) SecretFiles() []string { return []string{s.file} }

func TestSecretPaths(t *testing.T) {
	cfg := &config.Config{DataDir: "/srv/data", Path: "/etc/bridge.yaml", Bots: []*config.Bot{
		{Name: "s", Platform: "slack"},
		{Name: "p", Platform: "whatsapp", Settings: fileSettings{"/var/lib/wa/phone.db"}},
	}}
	got := secretPaths(cfg)
	want := []string{"/srv/data", "/etc/bridge.yaml", "/var/lib/wa/phone.db"}
	if !slices.Equal(got, want) {
		t.Errorf("secretPaths = %q, want %q", got, want)
	}
}
