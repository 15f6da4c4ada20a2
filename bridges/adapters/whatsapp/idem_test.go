package whatsapp

import (
	"errors"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
	"google.golang.org/protobuf/proto"

	"github.com/agentbridge/agentbridge/bridges"
)

// startOwned starts the adapter and has alice write, so that the bot may
// answer her chat; it returns the chat's conversation key.
func startOwned(t *testing.T) (*env, bridges.ConversationKey) {
	t.Helper()
	e := startWith(t, nil)
	e.dispatch(e.msg(pnJID(alice), pnJID(alice), "hello"))
	e.waitText(pnJID(alice), "pong: *hello*")
	return e, bridges.ConversationKey{Bot: "phone", Channel: pnJID(alice).String()}
}

// count is how many times chat shows a message starting with prefix.
func count(f *fakeClient, chat types.JID, prefix string) int {
	n := 0
	for _, s := range f.Shown(chat) {
		if strings.HasPrefix(s, prefix) {
			n++
		}
	}
	return n
}

// A send that reached WhatsApp but whose answer was lost (the client
// timed out waiting for it) is retried by the core with the same Idem:
// the same message ids go out again and each part shows once.
func TestPostRetryAfterLostSendShowsOnce(t *testing.T) {
	e, key := startOwned(t)
	m := bridges.Message{Text: "the answer", Idem: "6f1c1f9e-2f4b-4d7e-9d8a-2b1e1c0a9f11"}
	e.fake.LoseSends(1)
	_, err := e.b.Post(t.Context(), key, m)
	if !errors.Is(err, whatsmeow.ErrMessageTimedOut) || bridges.IsPermanent(err) {
		t.Fatalf("first Post: %v, want a transient timeout", err)
	}
	m.Retry = true
	ref, err := e.b.Post(t.Context(), key, m)
	if err != nil {
		t.Fatal(err)
	}
	if n := count(e.fake, pnJID(alice), "the answer"); n != 1 {
		t.Fatalf("the reply shows %d times, want once", n)
	}
	if ref.ID != string(messageID(m.Idem, 0)) {
		t.Errorf("ref %s, want %s", ref.ID, messageID(m.Idem, 0))
	}

	// A reply in two parts: the first part's answer is lost, then a
	// retry sends both, then another retry (as after the last part's
	// answer was lost) sends both again.
	long := bridges.Message{Text: strings.Repeat("a", maxTextRunes-100) + "\n\n" + strings.Repeat("b", 500),
		Idem: "0b7d2c53-5f5e-4a51-8f43-9a0f8b0e6d21"}
	e.fake.LoseSends(1)
	if _, err := e.b.Post(t.Context(), key, long); err == nil {
		t.Fatal("the first part's answer should have been lost")
	}
	long.Retry = true
	for range 2 {
		if _, err := e.b.Post(t.Context(), key, long); err != nil {
			t.Fatal(err)
		}
	}
	if na, nb := count(e.fake, pnJID(alice), "aaa"), count(e.fake, pnJID(alice), "bbb"); na != 1 || nb != 1 {
		t.Errorf("parts shown %d and %d times, want once each", na, nb)
	}
}

// While the client is disconnected a send fails like the real client's
// (an error wrapping whatsmeow.ErrNotConnected), transient: nothing is
// shown, and the core's retry once connected shows the reply once.
func TestPostWhileDisconnected(t *testing.T) {
	e, key := startOwned(t)
	e.fake.Disconnect()
	m := bridges.Message{Text: "while away", Idem: "2d0f8a51-97b1-4a55-b7a5-0e3c1d2b4f60"}
	_, err := e.b.Post(t.Context(), key, m)
	if !errors.Is(err, whatsmeow.ErrNotConnected) || bridges.IsPermanent(err) {
		t.Fatalf("Post while disconnected: %v, want transient ErrNotConnected", err)
	}
	if n := count(e.fake, pnJID(alice), "while away"); n != 0 {
		t.Fatalf("shown %d times while disconnected", n)
	}
	if err := e.fake.Connect(); err != nil {
		t.Fatal(err)
	}
	m.Retry = true
	if _, err := e.b.Post(t.Context(), key, m); err != nil {
		t.Fatal(err)
	}
	if n := count(e.fake, pnJID(alice), "while away"); n != 1 {
		t.Errorf("shown %d times, want once", n)
	}
}

// The fake refuses as the real client does: a linked but disconnected
// whatsmeow client fails SendMessage with an error wrapping
// ErrNotConnected (transient), an unlinked one with ErrNotLoggedIn
// (permanent). The ids the adapter chooses have the real format.
func TestRealClientSendRefusals(t *testing.T) {
	c, err := OpenDeviceStore(t.Context(), filepath.Join(t.TempDir(), "device.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	msg := &waE2E.Message{Conversation: proto.String("x")}

	unlinked, err := c.GetFirstDevice(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	_, err = whatsmeow.NewClient(unlinked, nil).SendMessage(t.Context(), pnJID(alice), msg)
	if !errors.Is(err, whatsmeow.ErrNotLoggedIn) || !isPermanent(err) {
		t.Errorf("unlinked real client: %v, want permanent ErrNotLoggedIn", err)
	}

	saveLinked(t, c, unlinked, botPhone)
	real := whatsmeow.NewClient(unlinked, nil)
	_, realErr := real.SendMessage(t.Context(), pnJID(alice), msg)
	fake := newFakeClient(nil)
	_, fakeErr := fake.SendMessage(t.Context(), pnJID(alice), msg)
	if !errors.Is(realErr, whatsmeow.ErrNotConnected) || !errors.Is(fakeErr, whatsmeow.ErrNotConnected) || realErr.Error() != fakeErr.Error() {
		t.Errorf("disconnected: real client %v, fake %v; want the same ErrNotConnected", realErr, fakeErr)
	}
	if isPermanent(realErr) {
		t.Errorf("disconnected is permanent: %v", realErr)
	}

	format := regexp.MustCompile(`^3EB0[0-9A-F]{18}$`)
	if gen := real.GenerateMessageID(); !format.MatchString(gen) {
		t.Fatalf("whatsmeow's own id %q does not have the expected format", gen)
	}
	id := messageID("idem", 0)
	if !format.MatchString(id) || id != messageID("idem", 0) || id == messageID("idem", 1) || id == messageID("other", 0) || messageID("", 0) != "" {
		t.Errorf("messageID: %q", id)
	}
}

// Errors no retry can fix are bridges.Permanent; timeouts, a lost
// connection and WhatsApp's 5xx/429 answers are not.
func TestPostErrorsPermanentOrTransient(t *testing.T) {
	e, key := startOwned(t)
	for _, tc := range []struct {
		err       error
		permanent bool
	}{
		{whatsmeow.ErrNotLoggedIn, true},
		{whatsmeow.ErrUnknownServer, true},
		{whatsmeow.ErrIQForbidden, true},
		{whatsmeow.ErrIQNotAuthorized, true},
		{whatsmeow.ErrIQNotFound, true},
		{whatsmeow.ErrMessageTimedOut, false},
		{whatsmeow.ErrIQServiceUnavailable, false},
		{whatsmeow.ErrIQRateOverLimit, false},
		{whatsmeow.ErrIQDisconnected, false},
		{whatsmeow.ErrIQInternalServerError, false},
	} {
		e.fake.mu.Lock()
		e.fake.sendErr = tc.err
		e.fake.mu.Unlock()
		_, err := e.b.Post(t.Context(), key, bridges.Message{Text: "x"})
		if err == nil || bridges.IsPermanent(err) != tc.permanent {
			t.Errorf("send error %v: Post %v, permanent %v, want %v", tc.err, err, bridges.IsPermanent(err), tc.permanent)
		}
	}
	e.fake.mu.Lock()
	e.fake.sendErr = nil
	e.fake.mu.Unlock()
	stranger := bridges.ConversationKey{Bot: "phone", Channel: pnJID("+15559990000").String()}
	if _, err := e.b.Post(t.Context(), stranger, bridges.Message{Text: "x"}); !errors.Is(err, ErrNotAllowed) || !bridges.IsPermanent(err) {
		t.Errorf("post to a stranger: %v, want permanent ErrNotAllowed", err)
	}
	if _, err := e.b.Post(t.Context(), bridges.ConversationKey{Bot: "phone", Channel: "not a jid"}, bridges.Message{Text: "x"}); !bridges.IsPermanent(err) {
		t.Errorf("post to an invalid JID: %v, want permanent", err)
	}
}
