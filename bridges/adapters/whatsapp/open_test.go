package whatsapp

import (
	"errors"
	"io"
	"path/filepath"
	"slices"
	"testing"
	"time"

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
		unlock, err := LockDeviceStore(path)
		if err != nil {
			t.Fatalf("lock after close: %v", err)
		}
		_ = unlock()
	}()
	if pn, _ := b.self(); pn.User != "15550000001" {
		t.Errorf("own number %v", pn)
	}
	// Issue 24, finding 9: the device store is locked against a second
	// user (another bridge, or whatsapp-link) while the bot runs.
	if _, _, err := Open(t.Context(), &config.Config{Path: "bridge.yaml"}, bot, nil); !errors.Is(err, ErrDeviceInUse) {
		t.Errorf("second Open of a running bot: %v, want ErrDeviceInUse", err)
	}
	if _, err := Link(t.Context(), LinkOptions{Bot: "phone", DeviceStore: path, Relink: true, Out: io.Discard}); !errors.Is(err, ErrDeviceInUse) {
		t.Errorf("relink of a running bot: %v, want ErrDeviceInUse (the device must not be deleted)", err)
	}
	if !slices.Equal(b.phones, []string{alice, bob}) {
		t.Errorf("phones %q", b.phones)
	}
}

// Once connected the access list's numbers are looked up, once: not at
// every reconnect (issue 24, finding 11).
func TestConnectedLooksUpPhones(t *testing.T) {
	e := startWith(t, nil)
	e.fake.Dispatch(&events.Connected{})
	cs := e.waitCalls("a lookup", func(cs []fakeCall) bool { return slices.ContainsFunc(cs, op("IsOnWhatsApp")) })
	e.fake.Dispatch(&events.Disconnected{})
	e.fake.Dispatch(&events.Connected{})
	e.fake.Dispatch(&events.PushNameSetting{}) // a later event: the handler is past the second Connected
	e.waitCalls("the presence after the push name", func(cs []fakeCall) bool {
		return len(slices.DeleteFunc(slices.Clone(cs), func(c fakeCall) bool { return c.Op != "SendPresence" })) == 3
	})
	time.Sleep(100 * time.Millisecond) // a second lookup would start at once (its own goroutine): give it time to show
	cs = e.fake.Calls()
	if n := len(slices.DeleteFunc(slices.Clone(cs), func(c fakeCall) bool { return c.Op != "IsOnWhatsApp" })); n != 1 {
		t.Errorf("%d lookups after a reconnect, want 1", n)
	}
	for _, c := range cs {
		if c.Op == "IsOnWhatsApp" && !slices.Equal(c.Phones, []string{alice, bob}) {
			t.Errorf("looked up %q", c.Phones)
		}
	}
}
