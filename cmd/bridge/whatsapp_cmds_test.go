package main

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.mau.fi/whatsmeow/proto/waAdv"
	"go.mau.fi/whatsmeow/types"

	"github.com/agentbridge/agentbridge/bridges/whatsapp"
)

// writeWAConfig writes a config with a slack bot and a whatsapp bot
// "phone" and returns its path.
func writeWAConfig(t *testing.T) string {
	t.Helper()
	cfg := `data_dir: ./data
http: { listen: "" }
agents:
  coder: {}
bots:
  - name: phone
    platform: whatsapp
    agent: coder
  - name: team
    platform: slack
    agent: coder
    slack: { bot_token: xoxb-1, app_token: xapp-1 }
`
	path := filepath.Join(t.TempDir(), "wa.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// `bridge run` with a WhatsApp bot that was never linked fails at start
// with the command that links it, and creates no device store.
func TestRunUnlinkedWhatsAppBot(t *testing.T) {
	t.Parallel()
	path := writeWAConfig(t)
	code, _, stderr := runCLI(t, exampleEnv, "run", "-config", path)
	want := "run `bridge whatsapp-link -config " + path + " -bot phone` first"
	if code != exitUsage || !strings.Contains(stderr, `whatsapp bot "phone" is not linked`) || !strings.Contains(stderr, want) {
		t.Fatalf("run with an unlinked whatsapp bot: code %d, stderr:\n%s\nwant %q", code, stderr, want)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(path), "data", "whatsapp-phone.db")); !os.IsNotExist(err) {
		t.Errorf("the start-up check created the device store: %v", err)
	}
}

func TestWhatsAppLinkUsage(t *testing.T) {
	t.Parallel()
	path := writeWAConfig(t)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no -bot", []string{"-config", path}, "-bot is required"},
		{"unknown bot", []string{"-config", path, "-bot", "nope"}, `no bot named "nope"`},
		{"not a whatsapp bot", []string{"-config", path, "-bot", "team"}, `bot "team" is a slack bot, not a whatsapp bot`},
		{"stray argument", []string{"-config", path, "-bot", "phone", "extra"}, "unexpected arguments"},
		{"bad flag", []string{"-config", path, "-bot", "phone", "-qr"}, "flag provided but not defined"},
		{"missing config", []string{"-config", path + ".missing", "-bot", "phone"}, "no such file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, exampleEnv, append([]string{"whatsapp-link"}, tt.args...)...)
			if code != exitUsage || !strings.Contains(stderr, tt.want) {
				t.Errorf("exit %d, stderr:\n%s\nwant exit %d and %q", code, stderr, exitUsage, tt.want)
			}
		})
	}
}

// A linked WhatsApp bot gets the real adapter (over a whatsmeow client of
// its device, not connected here: no network in tests), which reports its
// connection state; the device store is closed afterwards.
func TestBuildPlatformsLinkedWhatsApp(t *testing.T) {
	t.Parallel()
	path := writeWAConfig(t)
	cfg, err := loadConfigFile(path, exampleEnv)
	if err != nil {
		t.Fatal(err)
	}
	store := cfg.Bot("phone").Settings.(*whatsapp.Config).DeviceStore
	c, err := whatsapp.OpenDeviceStore(t.Context(), store, nil)
	if err != nil {
		t.Fatal(err)
	}
	dev := c.NewDevice()
	jid := types.NewJID("15550000001", types.DefaultUserServer)
	jid.Device = 3
	dev.ID = &jid
	dev.Account = &waAdv.ADVSignedDeviceIdentity{Details: []byte{1}, AccountSignature: make([]byte, 64),
		AccountSignatureKey: make([]byte, 32), DeviceSignature: make([]byte, 64)}
	if err := c.PutDevice(t.Context(), dev); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	platforms, bots, err := buildPlatforms(t.Context(), cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	p, ok := platforms["phone"].(*whatsapp.Bridge)
	if !ok || !p.Limits().ReportsState || p.Limits().ProgressInterval != 30*time.Second {
		t.Errorf("phone platform = %T %+v", platforms["phone"], platforms["phone"].Limits())
	}
	bots.close()
	if _, err := whatsapp.CheckLinked(t.Context(), "phone", store, path, nil); err != nil {
		t.Errorf("device store after close: %v", err)
	}
}
