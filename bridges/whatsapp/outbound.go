package whatsapp

import (
	"context"
	"fmt"
	"strings"

	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
	"google.golang.org/protobuf/proto"

	"github.com/agentbridge/agentbridge/bridges"
)

// Post implements bridges.Platform: the CommonMark text is rendered to
// WhatsApp markup, split at ~3,500 characters and sent as one message
// per part. The first part quotes m.ReplyTo when the adapter knows that
// message (an accepted user message or one of the bot's own). A card's
// parts are remembered, so that a number quoting one of them or a 👍 / 👎
// on it answers the card. The last part's reference is returned.
func (b *Bridge) Post(ctx context.Context, key bridges.ConversationKey, m bridges.Message) (bridges.MessageRef, error) {
	chat, err := types.ParseJID(key.Channel)
	if err != nil || chat.User == "" {
		return bridges.MessageRef{}, fmt.Errorf("whatsapp post: %w: conversation channel %q is not a chat", ErrBadMessage, key.Channel)
	}
	chat = chat.ToNonAD()
	parts := splitText(toWhatsApp(m.Text), maxTextRunes)
	if len(parts) == 0 {
		return bridges.MessageRef{}, fmt.Errorf("whatsapp post to %s: %w: empty message", chat, ErrBadMessage)
	}
	kind := cardKindOf(m)
	var ref bridges.MessageRef
	for i, p := range parts {
		msg := &waE2E.Message{ExtendedTextMessage: &waE2E.ExtendedTextMessage{Text: proto.String(p)}}
		if i == 0 {
			msg.ExtendedTextMessage.ContextInfo = b.quote(m.ReplyTo)
		}
		if err := b.pace.wait(ctx, chat.String()); err != nil {
			return ref, fmt.Errorf("whatsapp post to %s (part %d of %d): %w", chat, i+1, len(parts), err)
		}
		resp, err := b.cli.SendMessage(ctx, chat, msg)
		if err != nil {
			return ref, fmt.Errorf("whatsapp post to %s (part %d of %d): %w", chat, i+1, len(parts), err)
		}
		b.sent.Add(resp.ID, sentMsg{chat: chat, text: p, cardID: m.CardID, kind: kind})
		ref = bridges.MessageRef{Key: key, ID: resp.ID}
	}
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
		pn, _ := b.self()
		return &waE2E.ContextInfo{StanzaID: proto.String(id), Participant: proto.String(pn.ToNonAD().String()),
			QuotedMessage: &waE2E.Message{Conversation: proto.String(sm.text)}}
	}
	return nil
}

// cardKind is what a card asks, as far as answering it by number or
// reaction goes.
type cardKind int

const (
	cardNone       cardKind = iota
	cardPermission          // 1 allow · 2 always · 3 deny
	cardPlan                // 1 approve · 2 approve + edits · 3 reject
	cardQuestion            // answered by text (the core reads the numbers)
)

// cardKindOf tells the kind of a card from its choices line (the core
// sends cards without buttons to platforms without them, listing the
// numbered choices in the text).
func cardKindOf(m bridges.Message) cardKind {
	switch {
	case m.CardID == "":
		return cardNone
	case strings.Contains(m.Text, "to approve and accept edits"):
		return cardPlan
	case strings.Contains(m.Text, "to allow"):
		return cardPermission
	default:
		return cardQuestion
	}
}

// choiceFor is the button id of choice n (1–3) of a card kind, "" if none.
func choiceFor(k cardKind, n int) string {
	if n < 1 || n > 3 {
		return ""
	}
	switch k {
	case cardPermission:
		return []string{bridges.ChoiceAllow, bridges.ChoiceAlways, bridges.ChoiceDeny}[n-1]
	case cardPlan:
		return []string{bridges.ChoiceApprove, bridges.ChoiceApproveEdits, bridges.ChoiceReject}[n-1]
	}
	return ""
}
