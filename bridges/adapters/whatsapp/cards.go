package whatsapp

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"strings"
	"unicode/utf8"

	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"

	"github.com/agentbridge/agentbridge/bridges"
)

// WhatsApp shows no buttons to normal accounts. A card's buttons (the
// core sends a permission or plan card's choices as Message.Buttons) are
// listed as numbered choices with fixed meanings (bridges.NumberOrder: 1
// Allow, 2 Deny, 3 Always allow): a reply with a number (or "yes" / "no" /
// "always") is read by the core, which decides the card the reply quotes
// (found by its message id in the store, also after a restart) or the
// newest card; a 👍 / 👎 reaction on the card is a click of that button. With approvals: poll the choices also come as
// a WhatsApp poll after the card, and a vote is a click. Question cards
// carry no buttons: their answers are text, read by the core.

// cardText is the CommonMark a card shows: the core's text and how to
// answer it.
func (b *Bridge) cardText(m bridges.Message) string {
	switch {
	case len(m.Buttons) == 0:
		return m.Text
	case b.approvals == ApprovalsPoll:
		return m.Text + "\n\n_Vote in the poll below, or reply to this message with " + bridges.NumberedChoices(m.Buttons) + "._"
	default:
		return m.Text + "\n\nReply " + bridges.NumberedChoices(m.Buttons) + "\n_(reply to this message, or react 👍 / 👎)_"
	}
}

// pollOptionLimit bounds a poll's name and option labels (WhatsApp cuts
// long ones).
const pollOptionLimit = 100

// postPoll sends a card's choices as a poll (one vote) after the card and
// remembers it, so that a vote on it answers the card. id is its message
// id ("" = chosen by whatsmeow); cardRef the id Post returns for the card.
// The options are in bridges.NumberOrder, like the numbered choices.
func (b *Bridge) postPoll(ctx context.Context, chat types.JID, m bridges.Message, id types.MessageID, cardRef string) error {
	buttons := bridges.NumberOrder(m.Buttons)
	labels := make([]string, len(buttons))
	for i, btn := range buttons {
		labels[i] = clipRunes(btn.Label, pollOptionLimit)
	}
	name := pollName(m.Text)
	msg := b.cli.BuildPollCreation(name, labels, 1)
	if err := b.pace.wait(ctx, chat.String()); err != nil {
		return fmt.Errorf("whatsapp poll to %s: %w", chat, err)
	}
	resp, err := b.cli.SendMessage(ctx, chat, msg, sendExtra(id)...)
	if err != nil {
		return fmt.Errorf("whatsapp poll to %s: %w", chat, err)
	}
	b.remember(resp.ID, sentMsg{chat: chat, text: name, cardID: m.CardID, buttons: m.Buttons, ref: cardRef})
	return nil
}

// pollName is a poll's question: the card's first line without markup.
func pollName(text string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(text), "\n")
	line = strings.TrimSpace(strings.NewReplacer("*", "", "_", "", "`", "", "~", "").Replace(line))
	line = strings.TrimSuffix(line, ":")
	if line == "" {
		line = "Your decision"
	}
	return clipRunes(line, pollOptionLimit)
}

// clipRunes cuts s to at most n runes, ending with "…" when cut.
func clipRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// onReaction maps 👍 / 👎 on a card to its primary / danger button; other
// reactions, removed reactions, reactions on other messages and on
// question cards are ignored, and so are reactions of senders the core
// does not allow.
func (b *Bridge) onReaction(ctx context.Context, h bridges.Handler, e *events.Message, r *waE2E.ReactionMessage) bool {
	sm, ok := b.sent.Get(r.GetKey().GetID())
	if !ok || sm.cardID == "" {
		return true
	}
	emoji := r.GetText()
	if emoji != "👍" && emoji != "👎" && !strings.HasPrefix(emoji, "👍") && !strings.HasPrefix(emoji, "👎") {
		return true
	}
	choice := bridges.ChoiceFromText(sm.buttons, emoji)
	if choice == "" {
		return true
	}
	return b.cardAnswer(ctx, h, e, sm, choice, "reaction")
}

// onPollVote answers a card by a vote on its poll. The vote is decrypted
// only for a sender the core allows; a withdrawn vote decides nothing.
func (b *Bridge) onPollVote(ctx context.Context, h bridges.Handler, e *events.Message, pu *waE2E.PollUpdateMessage) bool {
	sm, ok := b.sent.Get(pu.GetPollCreationMessageKey().GetID())
	if !ok || sm.cardID == "" || len(sm.buttons) == 0 {
		return true
	}
	if !b.allowedSender(ctx, h, e) {
		b.log.Info("whatsapp poll vote from a sender not allowed ignored", "msg_id", e.Info.ID)
		return true
	}
	vote, err := b.cli.DecryptPollVote(ctx, e)
	if err != nil {
		b.log.Warn("whatsapp poll vote not decrypted", "msg_id", e.Info.ID, "err", err)
		return true // a redelivery would not decrypt either
	}
	sel := vote.GetSelectedOptions()
	if len(sel) != 1 {
		return true // withdrawn (or several options, which the poll does not allow)
	}
	for _, btn := range sm.buttons {
		if sum := sha256.Sum256([]byte(clipRunes(btn.Label, pollOptionLimit))); bytes.Equal(sum[:], sel[0]) {
			return b.cardAnswer(ctx, h, e, sm, btn.ID, "poll vote")
		}
	}
	b.log.Info("whatsapp poll vote for an unknown option ignored", "msg_id", e.Info.ID)
	return true
}

// allowedSender reports whether the core lets e's sender talk in e's chat.
func (b *Bridge) allowedSender(ctx context.Context, h bridges.Handler, e *events.Message) bool {
	user, mapped := b.phoneOf(ctx, e.Info)
	key := bridges.ConversationKey{Bot: b.bot, Channel: channelOf(e.Info.Chat.ToNonAD(), user, e.Info.IsGroup)}
	return mapped && h.Allowed(key, user)
}

// cardAnswer hands the sender's choice on card sm to the core, which
// checks that they may decide it.
func (b *Bridge) cardAnswer(ctx context.Context, h bridges.Handler, e *events.Message, sm sentMsg, choice, how string) bool {
	user, mapped := b.phoneOf(ctx, e.Info)
	chat := e.Info.Chat.ToNonAD()
	key := bridges.ConversationKey{Bot: b.bot, Channel: channelOf(chat, user, e.Info.IsGroup)}
	if !mapped || !h.Allowed(key, user) {
		b.log.Info("whatsapp "+how+" on a card from a sender not allowed ignored", "user", user, "msg_id", e.Info.ID)
		return true
	}
	dedupe := chat.String() + "|" + e.Info.Sender.ToNonAD().String() + "|" + e.Info.ID
	return b.act(ctx, h, e, dedupe, bridges.Action{Key: key, CardID: sm.cardID, Choice: choice, UserID: user, UserName: e.Info.PushName})
}

// remember notes a message the bot sent (quotes of it, answers to its card).
func (b *Bridge) remember(id string, m sentMsg) { b.sent.Add(id, m) }
