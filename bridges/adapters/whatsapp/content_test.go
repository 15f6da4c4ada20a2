package whatsapp

import (
	"slices"
	"strings"
	"testing"

	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types/events"
	"google.golang.org/protobuf/proto"
)

// Issue 24, finding 3: every kind of message is answered. A video's
// caption reaches the agent with the video; a sticker, a location and a
// contact reach it as a short description; a voice note gets a reply
// saying voice is not set up (no transcription configured) and a read receipt. Before, all
// of them were acknowledged and dropped without a word.
func TestEveryKindAnswered(t *testing.T) {
	e := startWith(t, nil)
	chat := pnJID(alice)
	e.fake.mu.Lock()
	e.fake.files["/vid/1"] = []byte("fake mp4")
	e.fake.mu.Unlock()
	send := func(m *waE2E.Message) *events.Message {
		in := e.msg(chat, pnJID(alice), "")
		in.Message = m
		e.dispatch(in)
		return in
	}
	send(&waE2E.Message{VideoMessage: &waE2E.VideoMessage{Caption: proto.String("what happens here"),
		Mimetype: proto.String("video/mp4"), DirectPath: proto.String("/vid/1"), FileLength: proto.Uint64(8)}})
	e.waitText(chat, "what happens here")
	voice := send(&waE2E.Message{AudioMessage: &waE2E.AudioMessage{PTT: proto.Bool(true), Mimetype: proto.String("audio/ogg; codecs=opus"),
		DirectPath: proto.String("/voice/1"), Seconds: proto.Uint32(7)}})
	e.waitText(chat, "Voice notes are not set up on this bridge") // the core's answer (no transcription configured)
	// The receipt is sent beside the core's answer, not before it.
	e.waitCalls("the voice note marked read", func(cs []fakeCall) bool {
		return slices.ContainsFunc(cs, func(c fakeCall) bool { return c.Op == "MarkRead" && slices.Contains(c.IDs, voice.Info.ID) })
	})
	strange := e.msg(pnJID(stranger), pnJID(stranger), "")
	strange.Message = &waE2E.Message{AudioMessage: &waE2E.AudioMessage{PTT: proto.Bool(true), DirectPath: proto.String("/voice/2")}}
	e.dispatch(strange)
	send(&waE2E.Message{StickerMessage: &waE2E.StickerMessage{Emojis: proto.String("👍")}})
	e.waitText(chat, "Sent a sticker: 👍")
	send(&waE2E.Message{LocationMessage: &waE2E.LocationMessage{DegreesLatitude: proto.Float64(52.520008),
		DegreesLongitude: proto.Float64(13.404954), Name: proto.String("Alexanderplatz")}})
	e.waitText(chat, "Alexanderplatz")
	send(&waE2E.Message{ContactMessage: &waE2E.ContactMessage{DisplayName: proto.String("Carol"),
		Vcard: proto.String("BEGIN:VCARD\nVERSION:3.0\nFN:Carol\nTEL;type=CELL;waid=15550009999:+1 555 000 9999\nEND:VCARD")}})
	e.waitText(chat, "Carol")

	got := e.agentTexts()
	want := []string{"what happens here", "[Sent a sticker: 👍]", "52.520008, 13.404954 — Alexanderplatz", "[Shared a contact: Carol +1 555 000 9999]"}
	for _, w := range want {
		if !slices.ContainsFunc(got, func(s string) bool { return strings.Contains(s, w) }) {
			t.Errorf("the agent never got %q; it got %q", w, got)
		}
	}
	for _, c := range e.fake.Calls() {
		if c.To == pnJID(stranger) {
			t.Errorf("a stranger's voice note caused a call: %s", dumpCalls([]fakeCall{c}))
		}
	}
	if slices.ContainsFunc(got, func(s string) bool { return strings.Contains(strings.ToLower(s), "voice") }) {
		t.Errorf("the voice note reached the agent without a transcription: %q", got)
	}
}
