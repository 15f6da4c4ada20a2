package app

import (
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"go.mau.fi/whatsmeow/proto/waAdv"
	"go.mau.fi/whatsmeow/types"

	"github.com/agentbridge/agentbridge/bridges/adapters/whatsapp"
	"github.com/agentbridge/agentbridge/internal/testkit"
)

// writeLinkedConfig writes a config with a WhatsApp bot "phone" and
// returns its path.
func writeLinkedConfig(t *testing.T) string {
	t.Helper()
	cfg := `data_dir: ./data
http: { listen: "" }
agents:
  coder: {}
bots:
  - name: phone
    platform: whatsapp
    agent: coder
`
	path := filepath.Join(t.TempDir(), "wa.yaml")
	testkit.WriteFile(t, path, cfg)
	return path
}

// A linked WhatsApp bot gets the real adapter (over a whatsmeow client of
// its device, not connected here: no network in tests), which reports its
// connection state; the device store is closed afterwards.
func TestBuildPlatformsLinkedWhatsApp(t *testing.T) {
	t.Parallel()
	path := writeLinkedConfig(t)
	cfg, err := LoadConfig(path, func(string) (string, bool) { return "", false })
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
