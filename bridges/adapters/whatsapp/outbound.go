package whatsapp

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
	"google.golang.org/protobuf/proto"
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

// pacer spaces the messages sent to one chat at least interval apart: no
// bursts (WhatsApp flags accounts that send like bots).
type pacer struct {
	interval time.Duration
	mu       sync.Mutex
	next     map[string]time.Time // chat → earliest time of its next send
}

func newPacer(interval time.Duration) *pacer {
	return &pacer{interval: interval, next: map[string]time.Time{}}
}

// wait blocks until a message may be sent to chat and reserves that slot.
// It returns ctx's error when ctx ends first (the slot stays taken). A
// wait that ends late (a busy machine fires timers late) moves the chat's
// next slot along, so that the sends themselves, not only their slots,
// stay an interval apart.
func (p *pacer) wait(ctx context.Context, chat string) error {
	d := p.reserve(chat, time.Now())
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		p.sentAt(chat, time.Now())
		return nil
	}
}

// sentAt notes that chat's reserved slot was used at now: its next slot
// is at least an interval after now.
func (p *pacer) sentAt(chat string, now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if next := now.Add(p.interval); next.After(p.next[chat]) {
		p.next[chat] = next
	}
}

// reserve takes the next free slot of chat at or after now and returns how
// long to wait for it.
func (p *pacer) reserve(chat string, now time.Time) time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	at := now
	if next := p.next[chat]; next.After(now) {
		at = next
	}
	p.next[chat] = at.Add(p.interval)
	if len(p.next) > 4096 { // forget chats that are long quiet
		for c, t := range p.next {
			if t.Before(now) {
				delete(p.next, c)
			}
		}
	}
	return at.Sub(now)
}

// editMaxAge is how long after posting the bridge edits a message
// (Limits.EditMaxAge): WhatsApp's window (whatsmeow.EditWindow, 20
// minutes, checked by the server only) less a margin for pacing and
// clocks. Older messages get a new message instead (the core decides).
const editMaxAge = whatsmeow.EditWindow - 2*time.Minute

// Edit implements bridges.Editor: the message ref.ID (one of the bot's,
// younger than editMaxAge: the core checks) shows m instead, rendered like
// Post; a card's choices are listed again, a card without buttons (decided)
// no longer answers reactions. Text beyond one message is cut. WhatsApp
// shows "edited" and does not notify, so the core edits progress lines and
// cards only (Limits.WholeAnswers). Errors are classified like Post's.
func (b *Bridge) Edit(ctx context.Context, ref bridges.MessageRef, m bridges.Message) (err error) {
	defer func() { err = classify(err) }()
	chat, err := types.ParseJID(ref.Key.Channel)
	if err != nil || chat.User == "" || ref.ID == "" {
		return fmt.Errorf("whatsapp edit: %w: %q in %q is not a message", ErrBadMessage, ref.ID, ref.Key.Channel)
	}
	chat = chat.ToNonAD()
	parts := splitText(toWhatsApp(b.cardText(m)), maxTextRunes)
	if len(parts) == 0 {
		return fmt.Errorf("whatsapp edit of %s: %w: empty message", ref.ID, ErrBadMessage)
	}
	text := parts[0]
	if len(parts) > 1 {
		text = clipRunes(text, maxTextRunes-1) + "…"
	}
	if err := b.mayWrite(ctx, ref.Key); err != nil {
		return fmt.Errorf("whatsapp edit in %s: %w", chat, err)
	}
	msg := b.cli.BuildEdit(chat, ref.ID, &waE2E.Message{ExtendedTextMessage: &waE2E.ExtendedTextMessage{Text: proto.String(text)}})
	if err := b.pace.wait(ctx, chat.String()); err != nil {
		return fmt.Errorf("whatsapp edit of %s: %w", ref.ID, err)
	}
	if _, err := b.cli.SendMessage(ctx, chat, msg); err != nil {
		return fmt.Errorf("whatsapp edit of %s: %w", ref.ID, err)
	}
	prev, _ := b.sent.Get(ref.ID)
	b.remember(ref.ID, sentMsg{chat: chat, text: text, cardID: m.CardID, buttons: m.Buttons, ref: prev.ref})
	return nil
}
