package whatsapp

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"
	"google.golang.org/protobuf/proto"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/kits/platformtest"
	"github.com/agentbridge/agentbridge/internal/testkit"
)

// Issue 24, finding 11: in a chat with disappearing messages the bot's
// replies carry the chat's timer (the message arrives wrapped, unwrapped
// by whatsmeow as the real client does); once the timer is off, they
// carry none.
func TestDisappearingTimerHonoured(t *testing.T) {
	e := startWith(t, nil)
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
	e := startWith(t, nil)
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

// Issue 24, finding 11: when the bot's phone (its primary device) has not
// been seen for 12 days the admins are warned (log, and the bot's state as
// /healthz and !status show it) before WhatsApp unlinks the device at
// about 14; a sign of life from the phone resets it.
func TestPhoneOfflineWarning(t *testing.T) {
	var now atomic.Int64
	now.Store(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC).UnixNano())
	fake := newFakeClient(nil)
	b := New(Options{Bot: "phone", Client: fake, Now: func() time.Time { return time.Unix(0, now.Load()) }})
	rec := &platformtest.StateRecorder{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- b.Run(ctx, rec) }()
	defer func() { cancel(); <-done }()
	testkit.WaitUntil(t, "the condition", waitTimeout, func() bool { return fake.IsConnected() })
	own := func() *events.Message {
		me := pnJID(botPhone) // device 0: the phone
		return &events.Message{Info: types.MessageInfo{MessageSource: types.MessageSource{Chat: pnJID(alice), Sender: me, IsFromMe: true},
			ID: "FROMPHONE"}, Message: &waE2E.Message{Conversation: proto.String("sent from the phone")}}
	}
	fake.Dispatch(&events.Connected{})
	now.Add(int64(10 * 24 * time.Hour))
	fake.Dispatch(own()) // the phone was used on day 10
	now.Add(int64(11 * 24 * time.Hour))
	fake.Dispatch(&events.Connected{})
	if s := rec.Last(); s.Reason != "" {
		t.Errorf("warned 11 days after the phone was seen: %+v", s)
	}
	now.Add(int64(2 * 24 * time.Hour))
	fake.Dispatch(&events.Connected{})
	if s := rec.Last(); s.State != bridges.ConnConnected || !strings.Contains(s.Reason, "has not been online for 13 days") {
		t.Errorf("state 13 days after the phone was seen: %+v", s)
	}
}

// Issue 24, finding 11: in a group addressed by LID (as the real server
// sends them: senders and mentions by LID) the bot quotes its own messages
// under its LID, not its phone number.
func TestLIDGroupQuotesOwnMessagesByLID(t *testing.T) {
	e := startWith(t, nil)
	m := extended(e.msg(group, lidJID(aliceLID), "@"+botLID+" hello"), &waE2E.ContextInfo{MentionedJID: []string{botLID + "@lid"}})
	m.Info.AddressingMode = types.AddressingModeLID
	m.Info.SenderAlt = pnJID(alice)
	e.dispatch(m)
	reply := e.waitText(group, "pong: *hello*")
	key := bridges.ConversationKey{Bot: "phone", Channel: group.String()}
	if _, err := e.b.Post(t.Context(), key, bridges.Message{Text: "about that", ReplyTo: reply.ID}); err != nil {
		t.Fatal(err)
	}
	q := e.waitText(group, "about that").Message.GetExtendedTextMessage().GetContextInfo()
	if q.GetStanzaID() != reply.ID || q.GetParticipant() != botLID+"@lid" {
		t.Errorf("quote of the bot's own message: %v, want participant %s@lid", q, botLID)
	}
}
