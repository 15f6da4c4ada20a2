package discord

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/internal/textcut"
	"github.com/bwmarrin/discordgo"
)

// noMentions stops a message from pinging anyone: agent output that
// contains "@everyone" or a user mention stays plain text.
func noMentions() *discordgo.MessageAllowedMentions {
	return &discordgo.MessageAllowedMentions{Parse: []discordgo.AllowedMentionType{}}
}

// Post implements bridges.Platform. The text is converted to Discord
// markdown. Up to 2,000 characters it is an ordinary message; longer, up
// to 4,000, it is one Components V2 message (a container with the text,
// components.go) rather than two ordinary ones; longer still it is split
// again into several such messages, the buttons going with the last one,
// whose reference is returned. A card (a message with buttons) is a
// Components V2 message too.
//
// With m.Idem each part is created with a nonce derived from Idem and its
// index and enforce_nonce (idem.go): a retry after a lost answer shows
// the message once. A live message (m.Live) is created the same way under
// the turn's key and taken over when an earlier holder's is still open
// (livemsg.go). Errors no retry can fix are marked bridges.Permanent.
func (b *Bridge) Post(ctx context.Context, key bridges.ConversationKey, m bridges.Message) (_ bridges.MessageRef, err error) {
	defer func() { err = classify(err) }()
	ch := channelOf(key)
	if ch == "" {
		return bridges.MessageRef{}, fmt.Errorf("discord post: %w: conversation key has no channel", ErrBadMessage)
	}
	comps, err := components(m)
	if err != nil {
		return bridges.MessageRef{}, fmt.Errorf("discord post to %s: %w", ch, err)
	}
	text := toDiscord(m.Text)
	if strings.TrimSpace(text) == "" && len(comps) == 0 {
		return bridges.MessageRef{}, fmt.Errorf("discord post to %s: %w: empty message", ch, ErrBadMessage)
	}
	parts := splitMessage(text, maxV2Text)
	if len(parts) == 0 {
		parts = []string{""}
	}
	if len(parts) > 1 {
		b.log.Debug("discord message split after conversion", "channel", ch, "parts", len(parts))
	}
	var ref bridges.MessageRef
	for i, p := range parts {
		var reply *discordgo.MessageReference
		if i == 0 {
			reply = replyRef(key, m)
		}
		create := func(nonce string) (*discordgo.Message, error) {
			switch {
			case i == len(parts)-1 && len(comps) > 0:
				return b.postV2(ctx, ch, p, m, nonce, reply)
			case utf8.RuneCountInString(p) > maxContentRunes:
				return b.postV2(ctx, ch, p, bridges.Message{}, nonce, reply)
			default:
				return b.sendMessage(ctx, ch, &discordgo.MessageSend{
					Content:         p,
					Components:      []discordgo.MessageComponent{},
					AllowedMentions: noMentions(),
					Reference:       reply,
				}, nonce)
			}
		}
		var msg *discordgo.Message
		switch {
		case m.Live && m.Idem != "" && len(parts) == 1:
			msg, err = b.postLive(ctx, bridges.MessageRef{Key: key}, p, m, create) // livemsg.go
		case m.Idem != "":
			msg, err = create(nonceOf(m.Idem, i))
		default:
			msg, err = create("")
		}
		if err != nil {
			return ref, fmt.Errorf("discord post to %s (part %d of %d): %w", ch, i+1, len(parts), err)
		}
		ref = bridges.MessageRef{Key: key, ID: msg.ID}
	}
	return ref, nil
}

// replyRef is the reference that makes a post a reply to m.ReplyTo, for a
// conversation without a thread (a channel where no thread could be
// started, a DM): there nothing else ties an answer to its question, so
// the first part of every message with a ReplyTo replies to it. In a
// thread, nil. A reply to a message deleted meanwhile is posted as a
// plain message (fail_if_not_exists false).
func replyRef(key bridges.ConversationKey, m bridges.Message) *discordgo.MessageReference {
	if key.Thread != "" || m.ReplyTo == "" {
		return nil
	}
	failIfGone := false
	return &discordgo.MessageReference{MessageID: m.ReplyTo, ChannelID: key.Channel, FailIfNotExists: &failIfGone}
}

// Edit implements bridges.Platform: it replaces the message's text and
// buttons (no buttons = components removed). A card, a message posted as
// Components V2, or a text longer than 2,000 characters after conversion
// makes it a Components V2 message (components.go): an ordinary message
// whose streamed text grows past 2,000 characters becomes one, and stays
// one, its text cut (with "…") at a safe boundary past 4,000. Errors no
// retry can fix are marked bridges.Permanent.
func (b *Bridge) Edit(ctx context.Context, ref bridges.MessageRef, m bridges.Message) (err error) {
	defer func() { err = classify(err) }()
	ch := channelOf(ref.Key)
	if ch == "" || ref.ID == "" {
		return fmt.Errorf("discord edit: %w: incomplete message reference", ErrBadMessage)
	}
	comps, err := components(m)
	if err != nil {
		return fmt.Errorf("discord edit %s/%s: %w", ch, ref.ID, err)
	}
	text := toDiscord(m.Text)
	if strings.TrimSpace(text) == "" && len(comps) == 0 {
		return fmt.Errorf("discord edit %s/%s: %w: empty message", ch, ref.ID, ErrBadMessage)
	}
	if len(comps) > 0 || b.isV2(ref.ID) || utf8.RuneCountInString(text) > maxContentRunes {
		if err := b.editV2(ctx, ch, ref.ID, text, m); err != nil {
			return fmt.Errorf("discord edit %s/%s: %w", ch, ref.ID, err)
		}
		return nil
	}
	_, err = b.session.ChannelMessageEditComplex(&discordgo.MessageEdit{
		ID:              ref.ID,
		Channel:         ch,
		Content:         &text,
		Components:      &comps,
		AllowedMentions: noMentions(),
	}, discordgo.WithContext(ctx))
	if needsV2(err) {
		err = b.editV2Fallback(ctx, ch, ref.ID, text, m, err)
	}
	if err != nil {
		return fmt.Errorf("discord edit %s/%s: %w", ch, ref.ID, err)
	}
	return nil
}

// components lays a card's buttons out in action rows (never nil, so that
// an edit without buttons removes them).
func components(m bridges.Message) ([]discordgo.MessageComponent, error) {
	out := []discordgo.MessageComponent{}
	if len(m.Buttons) == 0 {
		return out, nil
	}
	if len(m.Buttons) > maxButtons {
		return nil, fmt.Errorf("%w: %d buttons, Discord allows %d", ErrBadMessage, len(m.Buttons), maxButtons)
	}
	seen := map[string]bool{}
	var row discordgo.ActionsRow
	for _, btn := range m.Buttons {
		id, err := customID(m.CardID, btn.ID)
		if err != nil {
			return nil, err
		}
		if seen[id] {
			return nil, fmt.Errorf("%w: duplicate button id %q", ErrBadMessage, btn.ID)
		}
		seen[id] = true
		label := btn.Label
		if strings.TrimSpace(label) == "" {
			label = btn.ID
		}
		row.Components = append(row.Components, discordgo.Button{
			Label:    textcut.Truncate(label, maxLabelRunes),
			Style:    buttonStyle(btn.Style),
			CustomID: id,
		})
		if len(row.Components) == buttonsPerRow {
			out = append(out, row)
			row = discordgo.ActionsRow{}
		}
	}
	if len(row.Components) > 0 {
		out = append(out, row)
	}
	return out, nil
}

func buttonStyle(s bridges.ButtonStyle) discordgo.ButtonStyle {
	switch s {
	case bridges.StylePrimary:
		return discordgo.PrimaryButton
	case bridges.StyleDanger:
		return discordgo.DangerButton
	default:
		return discordgo.SecondaryButton
	}
}

// StartThread implements bridges.ThreadStarter: the message is posted in
// the channel and a public thread is started on it, named after its text
// (as for a mention that starts a conversation). In a channel without
// threads (a DM) the channel is the conversation.
func (b *Bridge) StartThread(ctx context.Context, in bridges.ConversationKey, m bridges.Message) (bridges.ConversationKey, bridges.MessageRef, error) {
	in.Thread = ""
	ref, err := b.Post(ctx, in, m)
	if err != nil {
		return in, ref, err
	}
	ci, err := b.channelInfo(ctx, in.Channel)
	if err != nil {
		b.log.Warn("discord: channel lookup failed; the conversation stays in the channel", "channel", in.Channel, "err", err)
		return in, ref, nil
	}
	posted := &discordgo.Message{ID: ref.ID, ChannelID: in.Channel, Author: &discordgo.User{Username: "agentbridge"}}
	key := b.startThread(ctx, posted, m.Text, ci, nil) // retried until ctx ends
	key.Bot = in.Bot
	return key, ref, nil
}
