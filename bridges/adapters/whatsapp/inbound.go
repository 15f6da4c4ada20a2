package whatsapp

import (
	"context"
	"strings"

	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"

	"github.com/agentbridge/agentbridge/bridges"
)

// onMessage turns one WhatsApp message into a bridges.Inbound (with the
// id of the message it quotes: a number quoting a card answers it in the
// core) or an Action (reactions on cards, poll votes). It reports false when the core could not record it (WhatsApp
// then delivers it again).
//
// Ignored: the bot's own messages, edits, protocol messages, status
// broadcasts, newsletters, duplicates, and in groups everything that
// neither mentions the bot (by phone JID or LID) nor quotes one of its
// messages. The sender is the phone number in E.164; a LID is mapped
// first, and an unmapped LID is dropped (it can match no allowlist
// entry). A sender the core does not allow causes nothing here: no read
// receipt, no presence, no download; the message goes to the core
// without files, which counts the refusal and stays silent.
func (b *Bridge) onMessage(ctx context.Context, e *events.Message) bool {
	h := b.handler()
	if h == nil || e == nil || e.Message == nil {
		return h != nil
	}
	info := e.Info
	chat := info.Chat.ToNonAD()
	if ignored(e) {
		return true
	}
	dedupe := chat.String() + "|" + info.Sender.ToNonAD().String() + "|" + info.ID
	b.recovered(dedupe)
	if _, dup := b.seen.Get(dedupe); dup {
		return true
	}
	if r := e.Message.GetReactionMessage(); r != nil {
		return b.onReaction(ctx, h, e, r)
	}
	if pu := e.Message.GetPollUpdateMessage(); pu != nil {
		return b.onPollVote(ctx, h, e, pu)
	}
	c := content(e.Message)
	text, ci, file := c.text, c.ci, c.file
	if info.IsGroup && !b.addressed(ci) {
		return true
	}
	user, mapped := b.phoneOf(ctx, info)
	if !mapped {
		b.log.Info("whatsapp message from an unmapped LID dropped", "user", info.Sender.ToNonAD().String(), "msg_id", info.ID)
		return true
	}
	key := bridges.ConversationKey{Bot: b.bot, Channel: channelOf(chat, user, info.IsGroup)}
	in := bridges.Inbound{Key: key, MsgID: info.ID, UserID: user, UserName: info.PushName,
		Text: strings.TrimSpace(b.stripMentions(text)), At: info.Timestamp}
	if !h.Allowed(key, user) {
		if err := h.HandleMessage(ctx, in); err != nil {
			b.log.Warn("whatsapp message not recorded", "key", key, "msg_id", info.ID, "err", err)
			return false
		}
		b.seen.Add(dedupe, true)
		return true
	}
	b.noteTimer(key.Channel, e, ci)
	b.noteAddressing(key.Channel, info)
	file = b.addContext(&in, e, ci, file)
	if in.Text == "" && len(in.Files) == 0 {
		b.log.Info("whatsapp message of a kind the bridge does not read", "key", key, "msg_id", info.ID)
		return true
	}
	// Remembered first: the core may fetch the file (or quote the
	// message) as soon as it has recorded it.
	// Its read receipt is noted first too: the core may answer before
	// HandleMessage returns, and the receipt goes before the answer.
	b.received.Add(info.ID, receivedMsg{chat: chat, sender: info.Sender.ToNonAD(), msg: e.Message, media: file.media()})
	b.noteUnread(key.Channel, info)
	if err := h.HandleMessage(ctx, in); err != nil {
		b.forgetUnread(key.Channel, info.ID)
		b.log.Warn("whatsapp message not recorded", "key", key, "msg_id", info.ID, "err", err)
		return false
	}
	b.seen.Add(dedupe, true)
	return true
}

// ignored reports whether e is a message the bridge never reads: the
// bot's own, a status or other broadcast, a newsletter's, an edit, or a
// protocol message.
func ignored(e *events.Message) bool {
	info := e.Info
	chat := info.Chat.ToNonAD()
	switch {
	case info.IsFromMe,
		chat.Server == types.BroadcastServer, // status@broadcast and broadcast lists
		chat.Server == types.NewsletterServer,
		e.IsEdit, info.Edit != "",
		e.Message.GetProtocolMessage() != nil:
		return true
	}
	return false
}

// addContext completes in, the message e of an allowed sender, with what
// it quotes (ci) and its attachment file, which it returns (nil for
// view-once media, which is not handed on).
func (b *Bridge) addContext(in *bridges.Inbound, e *events.Message, ci *waE2E.ContextInfo, file *inFile) *inFile {
	info := e.Info
	// A quote goes to the core, which resolves a card from the store (this
	// adapter's memory of its messages is bounded and lost on restarts): a
	// part or poll of a card is named by the card's message id.
	in.ReplyTo = ci.GetStanzaID()
	if sm, ok := b.sent.Get(in.ReplyTo); ok && sm.ref != "" {
		in.ReplyTo = sm.ref
	}
	if e.IsViewOnce && file != nil {
		// View-once media is not handed on (the core would keep it on disk).
		file = nil
		in.Text = strings.TrimSpace(in.Text + "\n[Sent a view-once photo or video, which the bridge does not keep or show to the agent]")
	}
	if file != nil {
		file.ID = info.ID
		in.Files = []bridges.File{file.File}
	}
	in.Quoted = quotedContext(ci)
	if qf := b.quotedFile(ci, info); qf != nil {
		in.Files = append(in.Files, *qf)
	}
	return file
}

// act hands an answer to a card (quoted number, reaction) to the core.
func (b *Bridge) act(ctx context.Context, h bridges.Handler, e *events.Message, dedupe string, a bridges.Action) bool {
	if err := h.HandleAction(ctx, a); err != nil {
		b.log.Warn("whatsapp card answer not handled", "key", a.Key, "msg_id", e.Info.ID, "err", err)
		return false
	}
	b.seen.Add(dedupe, true)
	b.markRead(ctx, e.Info)
	return true
}

// markRead sends the read receipt of an accepted message.
func (b *Bridge) markRead(ctx context.Context, info types.MessageInfo) {
	if err := b.cli.MarkRead(ctx, []types.MessageID{info.ID}, info.Timestamp, info.Chat, info.Sender); err != nil {
		b.log.Debug("whatsapp mark read", "msg_id", info.ID, "err", err)
	}
}

// phoneOf is the sender's phone number in E.164 ("+15551234567"): from a
// phone-number JID, the message's alternative address, or the LID map.
func (b *Bridge) phoneOf(ctx context.Context, info types.MessageInfo) (string, bool) {
	s := info.Sender.ToNonAD()
	switch s.Server {
	case types.DefaultUserServer:
		return "+" + s.User, s.User != ""
	case types.HiddenUserServer:
		if alt := info.SenderAlt.ToNonAD(); alt.Server == types.DefaultUserServer && alt.User != "" {
			return "+" + alt.User, true
		}
		if b.lids != nil {
			pn, err := b.lids.GetPNForLID(ctx, s)
			if err != nil {
				b.log.Warn("whatsapp LID lookup", "user", s.String(), "err", err)
				return "", false
			}
			if !pn.IsEmpty() && pn.User != "" {
				return "+" + pn.User, true
			}
		}
	}
	return "", false
}

// channelOf is a conversation's channel: the group JID, or for a private
// chat the sender's phone-number JID (a private chat that arrives under
// a LID is the same conversation).
func channelOf(chat types.JID, user string, group bool) string {
	if group || user == "" {
		return chat.String()
	}
	return types.NewJID(strings.TrimPrefix(user, "+"), types.DefaultUserServer).String()
}

// addressed reports whether a group message is for the bot: it mentions
// the bot's phone JID or LID, or quotes one of the bot's messages.
func (b *Bridge) addressed(ci *waE2E.ContextInfo) bool {
	if ci == nil {
		return false
	}
	pn, lid := b.self()
	for _, m := range ci.GetMentionedJID() {
		j, err := types.ParseJID(m)
		if err != nil {
			continue
		}
		if (j.User == pn.User && pn.User != "" && j.Server == types.DefaultUserServer) ||
			(j.User == lid.User && lid.User != "" && j.Server == types.HiddenUserServer) {
			return true
		}
	}
	if _, ok := b.sent.Get(ci.GetStanzaID()); ok && ci.GetStanzaID() != "" {
		return true
	}
	if p, err := types.ParseJID(ci.GetParticipant()); err == nil && ci.GetStanzaID() != "" {
		return (p.User == pn.User && pn.User != "") || (p.User == lid.User && lid.User != "")
	}
	return false
}

// stripMentions removes "@NUMBER" mentions of the bot from text.
func (b *Bridge) stripMentions(text string) string {
	pn, lid := b.self()
	for _, u := range []string{pn.User, lid.User} {
		if u != "" {
			text = strings.ReplaceAll(text, "@"+u, "")
		}
	}
	return text
}

// quotedContext is what the agent is told of the message ci quotes: its
// text (or description), naming its attachment (quotedFile hands that
// over). "" when nothing is quoted.
func quotedContext(ci *waE2E.ContextInfo) string {
	qm := ci.GetQuotedMessage()
	if qm == nil {
		return ""
	}
	q := content(qm)
	text := strings.TrimSpace(q.text)
	if q.file != nil {
		text = strings.TrimSpace("[" + q.file.Name + ", attached as " + quotedFileName(q.file.Name) + "]\n" + text)
	}
	return text
}

// quotedFile is the image, video or document of the message ci quotes,
// remembered for FetchFile under the id "<id of the quoting
// message>-quoted", or nil.
func (b *Bridge) quotedFile(ci *waE2E.ContextInfo, info types.MessageInfo) *bridges.File {
	qm := ci.GetQuotedMessage()
	if qm == nil {
		return nil
	}
	q := content(qm)
	if q.file == nil {
		return nil
	}
	f := q.file.File
	f.ID = info.ID + "-quoted"
	f.Name = quotedFileName(f.Name)
	b.received.Add(f.ID, receivedMsg{chat: info.Chat.ToNonAD(), sender: info.Sender.ToNonAD(), msg: qm, media: q.file.media()})
	return &f
}

// quotedFileName is the name a quoted attachment is given to the agent.
func quotedFileName(name string) string {
	if name == "" {
		name = "file"
	}
	return "quoted-" + name
}
