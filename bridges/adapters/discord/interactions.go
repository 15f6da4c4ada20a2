package discord

import (
	"context"
	"fmt"
	"strings"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/bwmarrin/discordgo"
)

// clickFailedText is the private answer when the core could not take a
// click (it said nothing itself).
const clickFailedText = "Sorry, that click could not be processed. Please try again."

// goInteraction handles an INTERACTION_CREATE on its own goroutine (clicks
// must be acknowledged within 3 s, whatever the message worker is doing).
// Run waits for these goroutines before it returns.
func (b *Bridge) goInteraction(ctx context.Context, h bridges.Handler, i *discordgo.Interaction) {
	if i == nil {
		return
	}
	b.mu.Lock()
	if !b.running {
		b.mu.Unlock()
		return
	}
	b.wg.Add(1)
	b.mu.Unlock()
	go func() {
		defer b.wg.Done()
		b.handleInteraction(ctx, h, i)
	}()
}

// handleInteraction acknowledges a button click with a deferred update
// (type 6) first, then gives it to the core as an Action.
func (b *Bridge) handleInteraction(ctx context.Context, h bridges.Handler, i *discordgo.Interaction) {
	if i.Type != discordgo.InteractionMessageComponent {
		b.log.Debug("discord interaction ignored", "type", i.Type.String())
		return
	}
	if b.recent.ContainsOrAdd(i.ID, struct{}{}) {
		b.log.Debug("discord interaction replayed; dropped", "interaction_id", i.ID)
		return
	}
	actx, cancel := context.WithTimeout(ctx, b.ackTimeout)
	err := b.session.InteractionRespond(i, &discordgo.InteractionResponse{
		Type: discordgo.InteractionResponseDeferredMessageUpdate,
	}, discordgo.WithContext(actx))
	cancel()
	if err != nil {
		// Discord shows "This interaction failed" to the clicker, but the
		// decision itself still counts.
		b.log.Warn("discord: acknowledge click", "interaction_id", i.ID, "err", err)
	}

	data := i.MessageComponentData()
	cardID, choice, ok := parseCustomID(data.CustomID)
	if !ok {
		b.log.Debug("discord click on a foreign component ignored", "custom_id", data.CustomID)
		return
	}
	user := i.User
	if i.Member != nil && i.Member.User != nil {
		user = i.Member.User
	}
	if user == nil {
		b.log.Warn("discord click without a user ignored", "interaction_id", i.ID)
		return
	}
	key, err := b.keyFor(ctx, i.GuildID, i.ChannelID)
	if err != nil {
		b.log.Warn("discord click dropped", "interaction_id", i.ID, "err", err)
		return
	}
	name := user.GlobalName
	if i.Member != nil && i.Member.Nick != "" {
		name = i.Member.Nick
	}
	if name == "" {
		name = user.Username
	}
	act := bridges.Action{
		Key:      key,
		CardID:   cardID,
		Choice:   choice,
		UserID:   user.ID,
		UserName: name,
		Reply:    b.replyTo(i),
	}
	hctx, hcancel := context.WithTimeout(ctx, handleTimeout)
	defer hcancel()
	if err := h.HandleAction(hctx, act); err != nil {
		b.log.Warn("discord click not accepted by the bridge", "key", key, "card", cardID, "err", err)
		if rerr := act.Reply(hctx, clickFailedText); rerr != nil {
			b.log.Warn("discord: answer failed click", "err", rerr)
		}
	}
}

// keyFor is the conversation key of a channel (a thread, a DM, or a guild
// channel used directly).
func (b *Bridge) keyFor(ctx context.Context, guildID, channelID string) (bridges.ConversationKey, error) {
	if guildID == "" {
		return bridges.ConversationKey{Bot: b.name, Channel: channelID}, nil
	}
	ci, err := b.channelInfo(ctx, channelID)
	if err != nil {
		return bridges.ConversationKey{}, err
	}
	if ci.thread {
		return bridges.ConversationKey{Bot: b.name, Channel: ci.parentID, Thread: channelID}, nil
	}
	return bridges.ConversationKey{Bot: b.name, Channel: channelID}, nil
}

// replyTo returns Action.Reply for a click: an ephemeral follow-up that
// only the clicker sees (valid for 15 minutes after the click).
func (b *Bridge) replyTo(i *discordgo.Interaction) func(ctx context.Context, text string) error {
	return func(ctx context.Context, text string) error {
		content := truncateMessage(toDiscord(text), maxContentRunes)
		if strings.TrimSpace(content) == "" {
			return fmt.Errorf("discord reply: %w: empty text", ErrBadMessage)
		}
		_, err := b.session.FollowupMessageCreate(i, true, &discordgo.WebhookParams{
			Content:         content,
			Flags:           discordgo.MessageFlagsEphemeral,
			AllowedMentions: noMentions(),
		}, discordgo.WithContext(ctx))
		if err != nil {
			return fmt.Errorf("discord ephemeral reply to interaction %s: %w", i.ID, err)
		}
		return nil
	}
}

// customID encodes a card button: "c:" + cardID + ":" + choice.
func customID(cardID, choice string) (string, error) {
	switch {
	case cardID == "":
		return "", fmt.Errorf("%w: a card with buttons needs a CardID", ErrBadMessage)
	case choice == "" || strings.Contains(choice, ":"):
		return "", fmt.Errorf("%w: button id %q must be non-empty and contain no ':'", ErrBadMessage, choice)
	}
	id := customIDPrefix + cardID + ":" + choice
	if len(id) > maxCustomID {
		return "", fmt.Errorf("%w: custom_id %q is %d bytes, Discord allows %d", ErrBadMessage, id, len(id), maxCustomID)
	}
	return id, nil
}

// parseCustomID decodes customID; ok is false for components that are not
// the adapter's card buttons.
func parseCustomID(id string) (cardID, choice string, ok bool) {
	rest, found := strings.CutPrefix(id, customIDPrefix)
	if !found {
		return "", "", false
	}
	j := strings.LastIndexByte(rest, ':')
	if j <= 0 || j == len(rest)-1 {
		return "", "", false
	}
	return rest[:j], rest[j+1:], true
}
