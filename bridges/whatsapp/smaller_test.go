package whatsapp

import (
	"strings"
	"testing"

	"go.mau.fi/whatsmeow/proto/waE2E"
	"google.golang.org/protobuf/proto"
)

// Issue 24, finding 11: in a chat with disappearing messages the bot's
// replies carry the chat's timer (the message arrives wrapped, unwrapped
// by whatsmeow as the real client does); once the timer is off, they
// carry none.
func TestDisappearingTimerHonoured(t *testing.T) {
	e := start(t)
	chat := pnJID(alice)
	const week = 7 * 24 * 3600
	m := e.msg(chat, pnJID(alice), "")
	m.Message = &waE2E.Message{EphemeralMessage: &waE2E.FutureProofMessage{Message: &waE2E.Message{ExtendedTextMessage: &waE2E.ExtendedTextMessage{
		Text: proto.String("secret"), ContextInfo: &waE2E.ContextInfo{Expiration: proto.Uint32(week)}}}}}
	e.dispatch(m)
	if got := e.waitText(chat, "pong: *secret*").Message.GetExtendedTextMessage().GetContextInfo().GetExpiration(); got != week {
		t.Errorf("reply timer %d s, want %d", got, week)
	}
	off := e.msg(chat, pnJID(alice), "")
	off.Message = &waE2E.Message{ExtendedTextMessage: &waE2E.ExtendedTextMessage{Text: proto.String("public"), ContextInfo: &waE2E.ContextInfo{}}}
	e.dispatch(off)
	if got := e.waitText(chat, "pong: *public*").Message.GetExtendedTextMessage().GetContextInfo().GetExpiration(); got != 0 {
		t.Errorf("reply timer %d s after the timer was turned off, want none", got)
	}
}

// Issue 24, finding 11: view-once media is not downloaded or handed to the
// agent (the core would keep it on disk); the agent is told it was sent.
func TestViewOnceNotKept(t *testing.T) {
	e := start(t)
	chat := pnJID(alice)
	e.fake.mu.Lock()
	e.fake.files["/img/once"] = []byte("\x89PNG once")
	e.fake.mu.Unlock()
	m := e.msg(chat, pnJID(alice), "")
	m.Message = &waE2E.Message{ViewOnceMessageV2: &waE2E.FutureProofMessage{Message: &waE2E.Message{ImageMessage: &waE2E.ImageMessage{
		Caption: proto.String("look once"), Mimetype: proto.String("image/png"), DirectPath: proto.String("/img/once"), FileLength: proto.Uint64(9)}}}}
	e.dispatch(m)
	e.waitText(chat, "look once")
	for _, c := range e.fake.Calls() {
		if c.Op == "Download" {
			t.Errorf("view-once media downloaded")
		}
	}
	if got := e.agentTexts(); len(got) != 1 || !strings.Contains(got[0], "look once") || !strings.Contains(got[0], "view-once") {
		t.Errorf("agent got %q", got)
	}
}
