package whatsapp

import (
	"context"
	"fmt"

	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
	"google.golang.org/protobuf/proto"

	"github.com/agentbridge/agentbridge/bridges"
)

// Post implements bridges.Platform: the CommonMark text is rendered to
// WhatsApp markup, split at ~3,500 characters and sent as one message
// per part. The first part quotes m.ReplyTo when the adapter knows that
// message (an accepted user message or one of the bot's own). A card's
// buttons are listed as numbered choices (cards.go) and its parts are
// remembered, so that a 👍 / 👎 on one of them answers the card and a
// reply quoting any of them names the returned message (the core finds
// the card by it); with approvals: poll a poll follows. The last text
// part's reference is returned. Post refuses (ErrNotAllowed) a chat that
// never wrote to the bot, before sending anything.
//
// In a chat with disappearing messages each part carries the chat's timer.
//
// With m.Idem each part (and the poll) is sent with a message id derived
// from Idem and its index (idem.go), so that a retry after a lost answer
// re-sends the same ids and WhatsApp shows each once. While the client is
// disconnected the send fails with a transient error; errors no retry can
// fix are marked bridges.Permanent.
func (b *Bridge) Post(ctx context.Context, key bridges.ConversationKey, m bridges.Message) (_ bridges.MessageRef, err error) {
	defer func() { err = classify(err) }()
	chat, err := types.ParseJID(key.Channel)
	if err != nil || chat.User == "" {
		return bridges.MessageRef{}, fmt.Errorf("whatsapp post: %w: conversation channel %q is not a chat", ErrBadMessage, key.Channel)
	}
	chat = chat.ToNonAD()
	parts := splitText(toWhatsApp(b.cardText(m)), maxTextRunes)
	if len(parts) == 0 {
		return bridges.MessageRef{}, fmt.Errorf("whatsapp post to %s: %w: empty message", chat, ErrBadMessage)
	}
	if err := b.mayWrite(ctx, key); err != nil {
		return bridges.MessageRef{}, fmt.Errorf("whatsapp post to %s: %w", chat, err)
	}
	b.readBeforeReply(ctx, key.Channel)
	var ref bridges.MessageRef
	var ids []string
	for i, p := range parts {
		msg := &waE2E.Message{ExtendedTextMessage: &waE2E.ExtendedTextMessage{Text: proto.String(p)}}
		if i == 0 {
			msg.ExtendedTextMessage.ContextInfo = b.quote(m.ReplyTo)
		}
		msg.ExtendedTextMessage.ContextInfo = b.withTimer(key.Channel, msg.ExtendedTextMessage.ContextInfo)
		if err := b.pace.wait(ctx, chat.String()); err != nil {
			return ref, fmt.Errorf("whatsapp post to %s (part %d of %d): %w", chat, i+1, len(parts), err)
		}
		resp, err := b.cli.SendMessage(ctx, chat, msg, sendExtra(messageID(m.Idem, i))...)
		if err != nil {
			return ref, fmt.Errorf("whatsapp post to %s (part %d of %d): %w", chat, i+1, len(parts), err)
		}
		ids = append(ids, resp.ID)
		b.remember(resp.ID, sentMsg{chat: chat, text: p, cardID: m.CardID, buttons: m.Buttons, ref: resp.ID})
		ref = bridges.MessageRef{Key: key, ID: resp.ID}
	}
	for i, id := range ids[:len(ids)-1] { // every part names the message the core knows
		b.remember(id, sentMsg{chat: chat, text: parts[i], cardID: m.CardID, buttons: m.Buttons, ref: ref.ID})
	}
	if len(m.Buttons) > 0 && b.approvals == ApprovalsPoll {
		if err := b.postPoll(ctx, chat, m, messageID(m.Idem, len(parts)), ref.ID); err != nil {
			// The card stands and numbered replies answer it.
			b.log.Warn("whatsapp card poll not sent", "key", key, "err", err)
		}
	}
	b.posted(key.Channel)
	return ref, nil
}

// quote is the context that makes a message quote id, or nil when the
// adapter does not know that message.
func (b *Bridge) quote(id string) *waE2E.ContextInfo {
	if id == "" {
		return nil
	}
	if rm, ok := b.received.Get(id); ok {
		return &waE2E.ContextInfo{StanzaID: proto.String(id), Participant: proto.String(rm.sender.String()), QuotedMessage: rm.msg}
	}
	if sm, ok := b.sent.Get(id); ok {
		me, lid := b.self()
		if !lid.IsEmpty() && b.lidGroup(sm.chat.String()) {
			me = lid // the group knows its members by LID
		}
		return &waE2E.ContextInfo{StanzaID: proto.String(id), Participant: proto.String(me.ToNonAD().String()),
			QuotedMessage: &waE2E.Message{Conversation: proto.String(sm.text)}}
	}
	return nil
}
