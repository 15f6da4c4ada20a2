package whatsapp

import (
	"errors"
	"path/filepath"
	"slices"
	"testing"

	"go.mau.fi/whatsmeow/types/events"

	"github.com/agentbridge/agentbridge/config"
)

// Open refuses an unlinked bot with the command to run, and makes an
// adapter whose own number is the linked device's.
func TestOpen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "whatsapp-phone.db")
	bot := &config.Bot{Name: "phone", Platform: Name, Settings: &Config{DeviceStore: path},
		Access: config.Access{Users: []string{alice, "U123"}, Admins: []string{alice, bob}}}
	if _, _, err := Open(t.Context(), &config.Config{Path: "bridge.yaml"}, bot, nil); !errors.Is(err, ErrNotLinked) {
		t.Fatalf("Open of an unlinked bot: %v, want ErrNotLinked", err)
	}
	c, err := OpenDeviceStore(t.Context(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	saveLinked(t, c, c.NewDevice(), "15550000001")
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	b, closeStore, err := Open(t.Context(), &config.Config{Path: "bridge.yaml"}, bot, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := closeStore(); err != nil {
			t.Error(err)
		}
	}()
	if pn, _ := b.self(); pn.User != "15550000001" {
		t.Errorf("own number %v", pn)
	}
	if !slices.Equal(b.phones, []string{alice, bob}) {
		t.Errorf("phones %q", b.phones)
	}
}

// On every connection the access list's numbers are looked up.
func TestConnectedLooksUpPhones(t *testing.T) {
	e := start(t)
	e.fake.Dispatch(&events.Connected{})
	cs := e.waitCalls("a lookup", func(cs []fakeCall) bool { return slices.ContainsFunc(cs, op("IsOnWhatsApp")) })
	for _, c := range cs {
		if c.Op == "IsOnWhatsApp" && !slices.Equal(c.Phones, []string{alice, bob}) {
			t.Errorf("looked up %q", c.Phones)
		}
	}
}
