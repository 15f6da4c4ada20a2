package whatsapp

import (
	"context"
	"fmt"
	"time"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
	"google.golang.org/protobuf/proto"

	"github.com/agentbridge/agentbridge/bridges"
)

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
