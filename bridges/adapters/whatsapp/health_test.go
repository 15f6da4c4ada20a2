package whatsapp

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/store/sqlstore"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/kits/platformtest"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/internal/testkit"
)

// Issue 24, finding 5: presence is sent after connecting and again when
// the push name arrives (the first one fails without it after linking).
func TestPresenceOnConnectedAndPushName(t *testing.T) {
	e := startWith(t, nil)
	presences := func(cs []fakeCall) int {
		return len(slices.DeleteFunc(slices.Clone(cs), func(c fakeCall) bool { return c.Op != "SendPresence" }))
	}
	e.fake.Dispatch(&events.Connected{})
	e.waitCalls("presence after connecting", func(cs []fakeCall) bool { return presences(cs) == 1 })
	e.fake.Dispatch(&events.PushNameSetting{})
	e.waitCalls("presence after the push name", func(cs []fakeCall) bool { return presences(cs) == 2 })
	for _, c := range e.fake.Calls() {
		if c.Op == "SendPresence" && c.State != string(types.PresenceUnavailable) {
			t.Errorf("presence %q, want unavailable (keeps the phone's notifications)", c.State)
		}
	}
}

// counter is a core stand-in that counts what the adapter reports.
type counter struct {
	bridges.Handler
	undecryptable atomic.Int32
}

func (c *counter) CountMessage(outcome string) {
	if outcome == "undecryptable" {
		c.undecryptable.Add(1)
	}
}

// Issue 24, finding 6: a message this device cannot decrypt is logged and
// counted; when no decrypted copy arrives in time its (allowed) sender is
// asked to send it again, quoting it; a copy that arrives in time, a
// stranger's message and a group message cause nothing. Before, such
// messages vanished without a log line.
func TestUndecryptableMessage(t *testing.T) {
	e := startWith(t, func(o *Options, _ *fakeClient, _ *sqlstore.Container) { o.RecoverWait = 100 * time.Millisecond })
	undecryptable := func(chat, sender types.JID, id string) *events.UndecryptableMessage {
		return &events.UndecryptableMessage{Info: types.MessageInfo{MessageSource: types.MessageSource{Chat: chat, Sender: sender,
			IsGroup: chat.Server == types.GroupServer}, ID: id, Timestamp: time.Now()}}
	}
	for _, u := range []*events.UndecryptableMessage{undecryptable(pnJID(alice), pnJID(alice), "LOST1"),
		undecryptable(pnJID(alice), pnJID(alice), "BACK1"), undecryptable(pnJID(stranger), pnJID(stranger), "STRANGE1"),
		undecryptable(group, pnJID(alice), "GROUP1")} {
		e.fake.Dispatch(u)
	}
	back := e.msg(pnJID(alice), pnJID(alice), "hello again")
	back.Info.ID = "BACK1"
	e.dispatch(back) // the re-requested copy
	told := e.waitText(pnJID(alice), "could not read this message")
	if q := told.Message.GetExtendedTextMessage().GetContextInfo().GetStanzaID(); q != "LOST1" {
		t.Errorf("the notice quotes %q, want LOST1", q)
	}
	e.waitText(pnJID(alice), "pong: *hello again*")
	time.Sleep(300 * time.Millisecond) // past every wait
	var notices []string
	for _, s := range sends(e.fake.Calls()) {
		if strings.Contains(textOf(s), "could not read") {
			notices = append(notices, s.To.String()+" "+s.Message.GetExtendedTextMessage().GetContextInfo().GetStanzaID())
		}
	}
	if len(notices) != 1 {
		t.Errorf("notices %q, want one (alice's LOST1)", notices)
	}
	c := &counter{Handler: e.b.handler()}
	e.b.onUndecryptable(context.Background(), c, undecryptable(group, pnJID(bob), "GROUP2"))
	if n := c.undecryptable.Load(); n != 1 {
		t.Errorf("counted %d undecryptable messages, want 1", n)
	}
}

// Issue 24, finding 6: "client outdated" makes Run fetch WhatsApp Web's
// current version and connect again; outdated once more, the bot fails
// with the upgrade remedy. Before, the first one stopped the bot.
func TestClientOutdatedRefreshesVersion(t *testing.T) {
	fake := newFakeClient(nil)
	var refreshes atomic.Int32
	b := New(Options{Bot: "phone", Client: fake, RefreshVersion: func(context.Context) (bool, error) {
		refreshes.Add(1)
		return true, nil
	}})
	rec := &platformtest.StateRecorder{}
	done := make(chan error, 1)
	go func() { done <- b.Run(context.Background(), rec) }()
	connects := func() int {
		return len(slices.DeleteFunc(fake.Calls(), func(c fakeCall) bool { return c.Op != "Connect" }))
	}
	testkit.WaitUntil(t, "the condition", waitTimeout, func() bool { return connects() == 1 })
	fake.Dispatch(&events.ClientOutdated{})
	testkit.WaitUntil(t, "the condition", waitTimeout, func() bool { return connects() == 2 })
	if n := refreshes.Load(); n != 1 {
		t.Errorf("%d version refreshes, want 1", n)
	}
	fake.Dispatch(&events.ClientOutdated{})
	select {
	case err := <-done:
		if f, ok := errors.AsType[*bridges.Failure](err); !ok || f.Remedy != bridges.RemedyUpgrade {
			t.Errorf("Run = %v, want the upgrade remedy", err)
		}
	case <-time.After(waitTimeout):
		t.Fatal("Run did not end on a second outdated")
	}
}

// Issue 24, finding 6: the real client is made with the retry message
// store and re-requests from the phone on (the reference bridge's options).
func TestOpenSetsClientOptions(t *testing.T) {
	b := openLinked(t)
	cli, ok := b.cli.(*whatsmeow.Client)
	if !ok || !cli.UseRetryMessageStore || !cli.AutomaticMessageRerequestFromPhone || cli.EnableAutoReconnect {
		t.Errorf("client options: retry store %v, rerequest from phone %v, auto reconnect %v",
			cli.UseRetryMessageStore, cli.AutomaticMessageRerequestFromPhone, cli.EnableAutoReconnect)
	}
}

// openLinked opens a bot whose device store holds a linked device.
func openLinked(t *testing.T) *Bridge {
	t.Helper()
	path := filepath.Join(t.TempDir(), "whatsapp-phone.db")
	c, err := OpenDeviceStore(t.Context(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	saveLinked(t, c, c.NewDevice(), "15550000001")
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	bot := &config.Bot{Name: "phone", Platform: Name, Settings: &Config{DeviceStore: path}}
	b, closeStore, err := Open(t.Context(), &config.Config{Path: "bridge.yaml"}, bot, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := closeStore(); err != nil {
			t.Error(err)
		}
	})
	return b
}
