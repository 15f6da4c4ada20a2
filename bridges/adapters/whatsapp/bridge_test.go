package whatsapp

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"go.mau.fi/whatsmeow/proto/waCommon"
	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/store/sqlstore"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"
	"google.golang.org/protobuf/proto"

	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/kits/bridgetest"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/internal/testkit"
)

// Phone numbers and JIDs of the tests.
const (
	alice    = "+15551110001" // allowed, approver
	bob      = "+15552220002" // allowed, not an approver
	stranger = "+15559990009" // not allowed
	botPhone = "15550000001"
	botLID   = "88800000001"
	aliceLID = "77700000001" // mapped to alice in the LID map
	unmapped = "66600000001" // a LID nobody mapped
)

// sendInterval paces the adapter's sends in tests.
const sendInterval = 50 * time.Millisecond

var group = types.NewJID("120363000000000001", types.GroupServer)

func pnJID(phone string) types.JID {
	return types.NewJID(strings.TrimPrefix(phone, "+"), types.DefaultUserServer)
}

func lidJID(user string) types.JID { return types.NewJID(user, types.HiddenUserServer) }

// script answers "pong: TEXT", asks for Bash on "ask …", writes a long
// answer on "long", and asks a question on "question".
func script(s *bridgetest.FakeSession, m streamjson.UserMessage) {
	switch {
	case strings.HasPrefix(m.Text, "ask "):
		id := "req-" + strings.TrimPrefix(m.Text, "ask ")
		input, _ := json.Marshal(map[string]string{"command": "make test"})
		req := streamjson.PermissionRequest{RequestID: id, ToolName: "Bash", Input: input, ToolUseID: "tu-" + id}
		s.Emit(streamjson.Lifecycle{UUID: m.UUID, State: streamjson.LifecycleStarted})
		s.Emit(streamjson.ToolUse{ID: req.ToolUseID, Name: req.ToolName, Input: req.Input})
		d, ok := s.Ask(req)
		if !ok {
			return
		}
		out := "denied " + id
		if d.Allow {
			out = "allowed " + id
		}
		s.Emit(streamjson.Lifecycle{UUID: m.UUID, State: streamjson.LifecycleCompleted})
		s.Emit(streamjson.Result{Subtype: "success", Text: out, SessionID: s.Opts.SessionID})
	case m.Text == "question":
		input, _ := json.Marshal(map[string]any{"questions": []map[string]any{{"question": "Which colour?", "header": "Pick",
			"multiSelect": false, "options": []map[string]string{{"label": "Red"}, {"label": "Green"}, {"label": "Blue"}}}}})
		req := streamjson.PermissionRequest{RequestID: "q1", ToolName: "AskUserQuestion", Input: input, ToolUseID: "tu-q1", RequiresUserInteraction: true}
		s.Emit(streamjson.Lifecycle{UUID: m.UUID, State: streamjson.LifecycleStarted})
		s.Emit(streamjson.ToolUse{ID: req.ToolUseID, Name: req.ToolName, Input: req.Input})
		d, ok := s.Ask(req)
		if !ok {
			return
		}
		s.Emit(streamjson.Lifecycle{UUID: m.UUID, State: streamjson.LifecycleCompleted})
		s.Emit(streamjson.Result{Subtype: "success", Text: "answered " + string(d.UpdatedInput), SessionID: s.Opts.SessionID})
	case m.Text == "long":
		var b strings.Builder
		for i := range 30 {
			fmt.Fprintf(&b, "Paragraph %d: %s\n\n", i+1, strings.Repeat("lorem ipsum ", 25))
		}
		s.Reply(m, "**Long** answer\n\n"+b.String())
	default:
		s.Reply(m, "pong: **"+m.Text+"**")
	}
}

// env is the adapter over the recording fake client, run by a real core.
type env struct {
	t    *testing.T
	fake *fakeClient
	b    *Bridge
	core *bridgetest.Core
	n    int
}

// startWith runs the adapter over a new recording fake client with a real
// core (fake agents), tweak (if not nil) applied to the adapter's options
// and the fake client (whose device store is dev) before the core starts.
func startWith(t *testing.T, tweak func(o *Options, fake *fakeClient, dev *sqlstore.Container)) *env {
	t.Helper()
	return startFull(t, tweak, nil)
}

// startFull is startWith with the core's config changed by edit (if not nil).
func startFull(t *testing.T, tweak func(o *Options, fake *fakeClient, dev *sqlstore.Container), edit func(*config.Config)) *env {
	t.Helper()
	return startScript(t, tweak, edit, script)
}

// startScript is startFull with the agent playing play.
func startScript(t *testing.T, tweak func(o *Options, fake *fakeClient, dev *sqlstore.Container), edit func(*config.Config), play bridgetest.Script) *env {
	t.Helper()
	ctx := context.Background()
	dev, err := OpenDeviceStore(ctx, filepath.Join(t.TempDir(), "device.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = dev.Close() })
	if err := dev.LIDMap.PutLIDMapping(ctx, lidJID(aliceLID), pnJID(alice)); err != nil {
		t.Fatal(err)
	}
	fake := newFakeClient(nil)
	self := func() (types.JID, types.JID) {
		pn, lid := pnJID("+"+botPhone), lidJID(botLID)
		pn.Device, lid.Device = 7, 7
		return pn, lid
	}
	o := Options{Bot: "phone", Client: fake, Self: self, LIDs: dev.LIDMap, Phones: []string{alice, bob},
		SendInterval: sendInterval}
	if tweak != nil {
		tweak(&o, fake, dev)
	}
	b := New(o)
	cfg := bridgetest.Config(t, &config.Bot{Name: "phone", Platform: Name, Agent: "coder", Settings: &Config{},
		Access: config.Access{Users: []string{alice, bob}, Approvers: []string{alice}}})
	if edit != nil {
		edit(cfg)
	}
	core := bridgetest.RunCore(t, cfg, map[string]bridges.Platform{"phone": b}, play)
	e := &env{t: t, fake: fake, b: b, core: core}
	e.waitCalls("the adapter connects", func(cs []fakeCall) bool { return slices.ContainsFunc(cs, op("Connect")) })
	return e
}

func op(name string) func(fakeCall) bool { return func(c fakeCall) bool { return c.Op == name } }

// msg builds an incoming text message.
func (e *env) msg(chat, sender types.JID, text string) *events.Message {
	e.n++
	return &events.Message{
		Info: types.MessageInfo{
			MessageSource: types.MessageSource{Chat: chat, Sender: sender, IsGroup: chat.Server == types.GroupServer},
			ID:            fmt.Sprintf("IN%03d", e.n), PushName: "+" + sender.User, Timestamp: time.Unix(1_800_000_000+int64(e.n), 0),
		},
		Message: &waE2E.Message{Conversation: proto.String(text)},
	}
}

// extended makes m an extended text message with the given context.
func extended(m *events.Message, ci *waE2E.ContextInfo) *events.Message {
	m.Message = &waE2E.Message{ExtendedTextMessage: &waE2E.ExtendedTextMessage{Text: proto.String(m.Message.GetConversation()), ContextInfo: ci}}
	return m
}

func (e *env) dispatch(evt *events.Message) {
	e.t.Helper()
	if !e.fake.Dispatch(evt) {
		e.t.Fatalf("handler refused %s", evt.Info.ID)
	}
}

// waitCalls waits until the fake's calls satisfy cond.
func (e *env) waitCalls(what string, cond func([]fakeCall) bool) []fakeCall {
	e.t.Helper()
	return e.waitCallsWithin(waitTimeout, what, cond)
}

func (e *env) waitCallsWithin(timeout time.Duration, what string, cond func([]fakeCall) bool) []fakeCall {
	e.t.Helper()
	var cs []fakeCall
	testkit.WaitUntilSeen(e.t, what, timeout, func() (bool, string) {
		cs = e.fake.Calls()
		return cond(cs), "calls:\n" + dumpCalls(cs)
	})
	return cs
}

// waitText waits for a message sent to chat whose text contains sub.
func (e *env) waitText(chat types.JID, sub string) fakeCall {
	e.t.Helper()
	return e.waitTextWithin(waitTimeout, chat, sub)
}

func (e *env) waitTextWithin(timeout time.Duration, chat types.JID, sub string) fakeCall {
	e.t.Helper()
	var found fakeCall
	e.waitCallsWithin(timeout, fmt.Sprintf("a message to %s with %q", chat, sub), func(cs []fakeCall) bool {
		for _, c := range cs {
			if c.Op == "SendMessage" && c.To == chat && strings.Contains(textOf(c), sub) {
				found = c
				return true
			}
		}
		return false
	})
	return found
}

// lastSentID is the id of the last message sent to chat containing sub.
func (e *env) lastSentID(chat types.JID, sub string) string {
	id := ""
	for _, c := range e.fake.Calls() {
		if c.Op == "SendMessage" && c.Err == nil && c.To == chat && strings.Contains(textOf(c), sub) {
			id = c.ID
		}
	}
	return id
}

// A private message is answered in the chat: rendered markup, the first
// part quoting the user's message, read receipt and composing presence
// (status_delay is 0 here), which the reply itself clears.
func TestPrivateChatAnswered(t *testing.T) {
	e := startWith(t, nil)
	in := e.msg(pnJID(alice), pnJID(alice), "hello")
	e.dispatch(in)
	got := e.waitText(pnJID(alice), "pong: *hello*")
	ci := got.Message.GetExtendedTextMessage().GetContextInfo()
	if ci.GetStanzaID() != in.Info.ID || ci.GetParticipant() != pnJID(alice).String() || ci.GetQuotedMessage().GetConversation() != "hello" {
		t.Errorf("answer does not quote the message: %+v", ci)
	}
	e.dispatch(e.msg(pnJID(alice), pnJID(alice), "again")) // its answer: the first turn is over
	e.waitText(pnJID(alice), "pong: *again*")
	cs := e.fake.Calls()
	if slices.ContainsFunc(cs, func(c fakeCall) bool {
		return c.Op == "SendChatPresence" && c.State == string(types.ChatPresencePaused)
	}) {
		t.Errorf("composing cleared by a call although the reply clears it:\n%s", dumpCalls(cs))
	}
	if !slices.ContainsFunc(cs, func(c fakeCall) bool { return c.Op == "MarkRead" && slices.Contains(c.IDs, in.Info.ID) }) {
		t.Errorf("message not marked read:\n%s", dumpCalls(cs))
	}
	if !slices.ContainsFunc(cs, func(c fakeCall) bool {
		return c.Op == "SendChatPresence" && c.To == pnJID(alice) && c.State == string(types.ChatPresenceComposing)
	}) {
		t.Errorf("no composing presence:\n%s", dumpCalls(cs))
	}
	if got := e.agentTexts(); !slices.Equal(got, []string{"hello", "again"}) {
		t.Errorf("agent got %q", got)
	}
}

// In a group the bot answers mentions of its phone JID or its LID and
// replies quoting its messages; other group messages are not its business.
func TestGroupAddressing(t *testing.T) {
	e := startWith(t, nil)
	e.dispatch(e.msg(group, pnJID(alice), "just chatting"))
	e.dispatch(extended(e.msg(group, pnJID(alice), "@"+botPhone+" by phone"), &waE2E.ContextInfo{MentionedJID: []string{botPhone + "@s.whatsapp.net"}}))
	first := e.waitText(group, "pong: *by phone*")
	e.dispatch(extended(e.msg(group, pnJID(bob), "@"+botLID+" by lid"), &waE2E.ContextInfo{MentionedJID: []string{botLID + "@lid"}}))
	e.waitText(group, "pong: *by lid*")
	if first.Op == "" || len(sends(e.fake.Calls())) < 1 {
		t.Fatal("no answer")
	}
	sentID := "SENT001" // the fake numbers its sends: the first answer
	e.dispatch(extended(e.msg(group, pnJID(bob), "quoting you"), &waE2E.ContextInfo{StanzaID: proto.String(sentID), Participant: proto.String(botPhone + "@s.whatsapp.net")}))
	e.waitText(group, "pong: *quoting you*")
	e.dispatch(extended(e.msg(group, pnJID(bob), "@12345 someone else"), &waE2E.ContextInfo{MentionedJID: []string{"12345@s.whatsapp.net"}}))
	e.dispatch(extended(e.msg(group, pnJID(alice), "@"+botPhone+" last"), &waE2E.ContextInfo{MentionedJID: []string{botPhone + "@s.whatsapp.net"}}))
	e.waitText(group, "pong: *last*")
	if got, want := e.agentTexts(), []string{"by phone", "by lid", "quoting you", "last"}; !slices.Equal(got, want) {
		t.Errorf("agent got %q, want %q", got, want)
	}
}

// Own messages, edits, protocol messages, status broadcasts and
// newsletters cause nothing; a redelivered message is handled once.
func TestIgnoredMessages(t *testing.T) {
	e := startWith(t, nil)
	own := e.msg(pnJID(alice), pnJID("+"+botPhone), "mine")
	own.Info.IsFromMe = true
	edit := e.msg(pnJID(alice), pnJID(alice), "edited")
	edit.IsEdit = true
	edit2 := e.msg(pnJID(alice), pnJID(alice), "edited too")
	edit2.Info.Edit = types.EditAttributeMessageEdit
	proto1 := e.msg(pnJID(alice), pnJID(alice), "")
	proto1.Message = &waE2E.Message{ProtocolMessage: &waE2E.ProtocolMessage{Type: waE2E.ProtocolMessage_REVOKE.Enum()}}
	status := e.msg(types.StatusBroadcastJID, pnJID(alice), "my status")
	news := e.msg(types.NewJID("1203630000", types.NewsletterServer), pnJID(alice), "news")
	for _, m := range []*events.Message{own, edit, edit2, proto1, status, news} {
		e.dispatch(m)
	}
	real := e.msg(pnJID(alice), pnJID(alice), "real")
	e.dispatch(real)
	e.dispatch(real) // redelivery
	e.waitText(pnJID(alice), "pong: *real*")
	if got := e.agentTexts(); !slices.Equal(got, []string{"real"}) {
		t.Errorf("agent got %q, want only the real message once", got)
	}
	for _, c := range sends(e.fake.Calls()) {
		if c.To != pnJID(alice) || !strings.Contains(textOf(c), "real") {
			t.Errorf("unexpected send: %s", dumpCalls([]fakeCall{c}))
		}
	}
}

// A LID sender is mapped to the phone number before the access check
// (the private chat is then the phone number's); an unmapped LID and a
// stranger's number get nothing at all: no answer, no receipt, no
// presence, no download.
func TestLIDSendersAndStrangers(t *testing.T) {
	e := startWith(t, nil)
	e.dispatch(e.msg(pnJID(stranger), pnJID(stranger), "let me in"))
	e.dispatch(e.msg(lidJID(unmapped), lidJID(unmapped), "me too"))
	img := e.msg(pnJID(stranger), pnJID(stranger), "")
	img.Message = &waE2E.Message{ImageMessage: &waE2E.ImageMessage{Caption: proto.String("look"), Mimetype: proto.String("image/png"), DirectPath: proto.String("/x")}}
	e.dispatch(img)
	e.dispatch(extended(e.msg(group, pnJID(stranger), "@"+botPhone+" hi"), &waE2E.ContextInfo{MentionedJID: []string{botPhone + "@s.whatsapp.net"}}))
	viaLID := e.msg(lidJID(aliceLID), lidJID(aliceLID), "via lid")
	e.dispatch(viaLID)
	e.waitText(pnJID(alice), "pong: *via lid*")
	for _, c := range e.fake.Calls() {
		if c.Op == "Connect" || c.To == pnJID(alice) || c.To == lidJID(aliceLID) {
			continue
		}
		t.Errorf("call caused by a stranger: %s", dumpCalls([]fakeCall{c}))
	}
	if got := e.agentTexts(); !slices.Equal(got, []string{"via lid"}) {
		t.Errorf("agent got %q", got)
	}
}

// An image's caption is the text and the image is downloaded for the
// agent.
func TestImageWithCaption(t *testing.T) {
	e := startWith(t, nil)
	e.fake.mu.Lock()
	e.fake.files["/img/1"] = []byte("\x89PNG fake")
	e.fake.mu.Unlock()
	m := e.msg(pnJID(alice), pnJID(alice), "")
	m.Message = &waE2E.Message{ImageMessage: &waE2E.ImageMessage{Caption: proto.String("what is this"),
		Mimetype: proto.String("image/png"), DirectPath: proto.String("/img/1"), FileLength: proto.Uint64(10)}}
	e.dispatch(m)
	e.waitText(pnJID(alice), "what is this")
	if !slices.ContainsFunc(e.fake.Calls(), op("Download")) {
		t.Errorf("image not downloaded:\n%s", dumpCalls(e.fake.Calls()))
	}
	if got := e.agentTexts(); len(got) != 1 || !strings.Contains(got[0], "what is this") {
		t.Errorf("agent got %q", got)
	}
	var images int
	for _, s := range e.core.Pool.Sessions() {
		for _, m := range s.Sent() {
			images += len(m.Images)
		}
	}
	if images != 1 {
		t.Errorf("agent got %d images, want 1", images)
	}
}

// A long answer is split into messages of at most ~3,500 characters; only
// the first quotes the user's message.
func TestLongAnswerSplit(t *testing.T) {
	e := startWith(t, nil)
	in := e.msg(pnJID(alice), pnJID(alice), "long")
	e.dispatch(in)
	e.waitText(pnJID(alice), "Paragraph 30")
	out := sends(e.fake.Calls())
	if len(out) < 2 {
		t.Fatalf("%d messages, want a split answer", len(out))
	}
	for i := 1; i < len(out); i++ {
		// (the fake stamps calls after the pacer's slot: allow some jitter)
		if gap := out[i].At.Sub(out[i-1].At); gap < sendInterval*3/4 {
			t.Errorf("parts %d and %d sent %v apart, want ≥ %v", i, i+1, gap, sendInterval)
		}
	}
	if !strings.HasPrefix(textOf(out[0]), "*Long* answer") {
		t.Errorf("first part not rendered: %.40q", textOf(out[0]))
	}
	for i, c := range out {
		if n := utf8.RuneCountInString(textOf(c)); n > maxTextRunes {
			t.Errorf("part %d has %d runes", i, n)
		}
		quoted := c.Message.GetExtendedTextMessage().GetContextInfo().GetStanzaID()
		if (i == 0) != (quoted == in.Info.ID) {
			t.Errorf("part %d quotes %q", i, quoted)
		}
	}
}

// card waits for the permission card of request id and returns its
// message id.
func (e *env) card(chat types.JID, id string) string {
	e.t.Helper()
	var found string
	e.waitCalls("the card of "+id, func(cs []fakeCall) bool {
		for _, c := range cs {
			if c.Op != "SendMessage" {
				continue
			}
			msgID := string(c.ID)
			if sm, ok := e.b.sent.Get(msgID); ok && sm.cardID == id && c.To == chat && strings.Contains(textOf(c), "Reply *1*") {
				found = msgID
				return true
			}
		}
		return false
	})
	return found
}

// Approvals by number: a bare "1" decides the pending card, a "2" (Deny: the card has no Always allow) quoting
// a card decides that card; someone who is not an approver is refused.
func TestApprovalByNumber(t *testing.T) {
	e := startWith(t, nil)
	e.dispatch(e.msg(pnJID(alice), pnJID(alice), "ask a"))
	e.card(pnJID(alice), "req-a")
	e.dispatch(e.msg(pnJID(alice), pnJID(alice), "1"))
	e.waitText(pnJID(alice), "allowed req-a")

	e.dispatch(e.msg(pnJID(alice), pnJID(alice), "ask b"))
	cardB := e.card(pnJID(alice), "req-b")
	e.dispatch(extended(e.msg(pnJID(alice), pnJID(alice), "2"), &waE2E.ContextInfo{StanzaID: proto.String(cardB), Participant: proto.String(botPhone + "@s.whatsapp.net")}))
	e.waitText(pnJID(alice), "denied req-b")

	e.dispatch(extended(e.msg(group, pnJID(bob), "@"+botPhone+" ask c"), &waE2E.ContextInfo{MentionedJID: []string{botPhone + "@s.whatsapp.net"}}))
	cardC := e.card(group, "req-c")
	e.dispatch(extended(e.msg(group, pnJID(alice), "1"), &waE2E.ContextInfo{StanzaID: proto.String(cardC), Participant: proto.String(botPhone + "@s.whatsapp.net")}))
	e.waitText(group, "allowed req-c")
	if d := decisions(e); !slices.Equal(d, []bool{true, false, true}) {
		t.Errorf("decisions %v", d)
	}
}

// Approvals by reaction: 👍 on the card allows, 👎 denies; a stranger's
// reaction is ignored.
func TestApprovalByReaction(t *testing.T) {
	e := startWith(t, nil)
	react := func(sender types.JID, cardID, emoji string) *events.Message {
		return e.reaction(pnJID(alice), sender, cardID, emoji)
	}
	e.dispatch(e.msg(pnJID(alice), pnJID(alice), "ask a"))
	cardA := e.card(pnJID(alice), "req-a")
	e.dispatch(react(pnJID(stranger), cardA, "👍"))
	e.dispatch(react(pnJID(alice), cardA, "❤️"))
	e.dispatch(react(pnJID(alice), cardA, "👍🏽"))
	e.waitText(pnJID(alice), "allowed req-a")

	e.dispatch(e.msg(pnJID(alice), pnJID(alice), "ask b"))
	cardB := e.card(pnJID(alice), "req-b")
	e.dispatch(react(pnJID(alice), cardB, "👎"))
	e.waitText(pnJID(alice), "denied req-b")
	if d := decisions(e); !slices.Equal(d, []bool{true, false}) {
		t.Errorf("decisions %v", d)
	}
}

// reaction builds a reaction of sender in chat on the bot's message id,
// keyed as a phone keys it: FromMe is the reactor's view (the message is
// not theirs), and in a group Participant names the bot.
func (e *env) reaction(chat, sender types.JID, id, emoji string) *events.Message {
	m := e.msg(chat, sender, "")
	key := &waCommon.MessageKey{RemoteJID: proto.String(chat.String()), FromMe: proto.Bool(false), ID: proto.String(id)}
	if chat.Server == types.GroupServer {
		key.Participant = proto.String(botPhone + "@s.whatsapp.net")
	}
	m.Message = &waE2E.Message{ReactionMessage: &waE2E.ReactionMessage{Key: key, Text: proto.String(emoji),
		SenderTimestampMS: proto.Int64(m.Info.Timestamp.UnixMilli())}}
	return m
}

// Someone allowed to talk but not to approve cannot decide a colleague's
// card, by a quoted number, a reaction or a number mentioning the bot (the
// core says so in the chat); the requester then can, and the card is
// edited to show the decision.
func TestApprovalRefusedForNonApprover(t *testing.T) {
	e := startWith(t, nil)
	mention := &waE2E.ContextInfo{MentionedJID: []string{botPhone + "@s.whatsapp.net"}}
	quoting := func(id string) *waE2E.ContextInfo {
		return &waE2E.ContextInfo{StanzaID: proto.String(id), Participant: proto.String(botPhone + "@s.whatsapp.net")}
	}
	e.dispatch(extended(e.msg(group, pnJID(alice), "@"+botPhone+" ask c"), mention))
	card := e.card(group, "req-c")
	e.dispatch(extended(e.msg(group, pnJID(bob), "1"), quoting(card)))
	e.dispatch(e.reaction(group, pnJID(bob), card, "👍"))
	e.dispatch(extended(e.msg(group, pnJID(bob), "@"+botPhone+" 1"), mention))
	e.waitText(group, "only @"+alice)
	if d := decisions(e); len(d) != 0 {
		t.Fatalf("a non-approver decided: %v", d)
	}
	e.dispatch(e.reaction(group, pnJID(alice), card, "👎"))
	e.waitText(group, "denied req-c")
	var status fakeCall
	for _, c := range sends(e.fake.Calls()) {
		if editedID(c) == card {
			status = c
		}
	}
	if !strings.Contains(textOf(status), "Denied by @"+alice) || strings.Contains(textOf(status), bob) || strings.Contains(textOf(status), "Reply *1*") {
		t.Errorf("decision %q is not an edit of the card naming %s, without its choices", textOf(status), alice)
	}
	if d := decisions(e); !slices.Equal(d, []bool{false}) {
		t.Errorf("decisions %v", d)
	}
}

// AskUserQuestion shows numbered options; a number quoting the question
// (or not) answers it with that option, and a 👍 on a question is no answer.
func TestQuestionByNumber(t *testing.T) {
	e := startWith(t, nil)
	chat := pnJID(alice)
	e.dispatch(e.msg(chat, pnJID(alice), "question"))
	q := e.waitText(chat, "Which colour?")
	for i, o := range []string{"Red", "Green", "Blue"} {
		if !strings.Contains(textOf(q), fmt.Sprintf("%d. *%s*", i+1, o)) {
			t.Errorf("option %d not numbered in %q", i+1, textOf(q))
		}
	}
	e.dispatch(e.reaction(chat, pnJID(alice), e.lastSentID(chat, "Which colour?"), "👍"))
	e.dispatch(extended(e.msg(chat, pnJID(alice), "2"), &waE2E.ContextInfo{StanzaID: proto.String(e.lastSentID(chat, "Which colour?"))}))
	got := e.waitText(chat, "answered")
	if !strings.Contains(textOf(got), "Green") {
		t.Errorf("answer %q, want Green", textOf(got))
	}
}

// "@bot !new" in a group starts a fresh session in the same chat: the
// mention is stripped before the core reads the command.
func TestNewSessionInGroup(t *testing.T) {
	e := startWith(t, nil)
	mention := &waE2E.ContextInfo{MentionedJID: []string{botPhone + "@s.whatsapp.net"}}
	e.dispatch(extended(e.msg(group, pnJID(alice), "@"+botPhone+" one"), mention))
	e.waitText(group, "pong: *one*")
	e.dispatch(extended(e.msg(group, pnJID(alice), "@"+botPhone+" !new"), mention))
	e.waitText(group, "fresh session")
	e.dispatch(extended(e.msg(group, pnJID(alice), "@"+botPhone+" two"), mention))
	e.waitText(group, "pong: *two*")
	acq := e.core.Pool.Acquisitions()
	if len(acq) != 2 || acq[0].Opts.SessionID == acq[1].Opts.SessionID {
		t.Errorf("acquisitions %+v, want two with different sessions", acq)
	}
	if got := e.agentTexts(); !slices.Equal(got, []string{"one", "two"}) {
		t.Errorf("agent got %q", got)
	}
}

// With status_delay, a turn answered sooner costs two calls: the read
// receipt, then the reply (no presence). Before issue 24 (finding 10) the
// receipt was dropped.
func TestQuickTurnIsOneCall(t *testing.T) {
	e := startFull(t, nil, func(c *config.Config) { c.StatusDelay = time.Second }) // the core's fake clock never gets there
	n := len(e.fake.Calls())
	// The second answer shows that the worker is past the first turn.
	for _, text := range []string{"hello", "again"} {
		e.dispatch(e.msg(pnJID(alice), pnJID(alice), text))
		e.waitText(pnJID(alice), "pong: *"+text+"*")
	}
	var turns []string
	for _, c := range e.fake.Calls()[n:] {
		turns = append(turns, c.Op)
	}
	if !slices.Equal(turns, []string{"MarkRead", "SendMessage", "MarkRead", "SendMessage"}) {
		t.Errorf("calls for two quick turns: %v, want a read receipt and the reply each", turns)
	}
}
