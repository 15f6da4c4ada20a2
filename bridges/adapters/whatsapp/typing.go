package whatsapp

import (
	"context"
	"fmt"
	"slices"
	"time"

	"go.mau.fi/whatsmeow/types"

	"github.com/agentbridge/agentbridge/bridges"
)

// maxUnread bounds the read receipts kept per chat, and maxUnreadChats the
// chats that have some.
const (
	maxUnread      = 20
	maxUnreadChats = 10000
)

// SetTyping implements bridges.Typer: on marks the chat's accepted
// messages read (their receipts wait for it or for the reply, batched per
// sender) and shows "composing…", repeated every TypingRefresh until
// off (WhatsApp drops it after ~25 s). Off sends "paused", unless a
// message was posted in the chat since on: a message clears the
// contact's "composing…" already. Like Post it refuses chats that never
// wrote to the bot.
func (b *Bridge) SetTyping(ctx context.Context, key bridges.ConversationKey, on bool) error {
	chat, err := types.ParseJID(key.Channel)
	if err != nil {
		return fmt.Errorf("whatsapp typing: %w: channel %q", ErrBadMessage, key.Channel)
	}
	chat = chat.ToNonAD()
	if err := b.mayWrite(ctx, key); err != nil {
		return fmt.Errorf("whatsapp typing in %s: %w", chat, err)
	}
	b.mu.Lock()
	cancel, composing := b.typing[key.Channel]
	if composing {
		cancel()
		delete(b.typing, key.Channel)
	}
	var unread []types.MessageInfo
	if on {
		unread = b.unread[key.Channel]
		delete(b.unread, key.Channel)
	}
	var loopCtx context.Context
	switch {
	case on && b.runCtx != nil:
		var cancel context.CancelFunc
		loopCtx, cancel = context.WithCancel(b.runCtx)
		b.typing[key.Channel] = cancel
	case on:
		b.typing[key.Channel] = func() {} // not running: no refresh
	}
	b.mu.Unlock()
	if !on {
		if !composing {
			return nil // a post cleared it, or it was never shown
		}
		if err := b.cli.SendChatPresence(ctx, chat, types.ChatPresencePaused, ""); err != nil {
			return fmt.Errorf("whatsapp typing off in %s: %w", chat, err)
		}
		return nil
	}
	b.markAllRead(ctx, unread)
	if err := b.cli.SendChatPresence(ctx, chat, types.ChatPresenceComposing, ""); err != nil {
		return fmt.Errorf("whatsapp typing in %s: %w", chat, err)
	}
	if loopCtx != nil && !b.tasks.Go(func() { b.refreshTyping(loopCtx, chat) }) {
		b.stopTyping() // Run is ending: no refresh
	}
	return nil
}

// refreshTyping repeats "composing" until ctx ends.
func (b *Bridge) refreshTyping(ctx context.Context, chat types.JID) {
	t := time.NewTicker(b.typingRefresh)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := b.cli.SendChatPresence(ctx, chat, types.ChatPresenceComposing, ""); err != nil {
				b.log.Debug("whatsapp typing refresh", "channel", chat.String(), "err", err)
			}
		}
	}
}

// noteUnread keeps the read receipt of an accepted message for the next
// SetTyping(on) in its conversation.
func (b *Bridge) noteUnread(channel string, info types.MessageInfo) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.unread) >= maxUnreadChats {
		clear(b.unread)
	}
	u := append(b.unread[channel], info)
	if len(u) > maxUnread {
		u = u[len(u)-maxUnread:]
	}
	b.unread[channel] = u
}

// forgetUnread drops the noted receipt of message id in channel: the core
// did not record it, so it is not read (WhatsApp redelivers it).
func (b *Bridge) forgetUnread(channel string, id types.MessageID) {
	b.mu.Lock()
	defer b.mu.Unlock()
	u := slices.DeleteFunc(b.unread[channel], func(m types.MessageInfo) bool { return m.ID == id })
	if len(u) == 0 {
		delete(b.unread, channel)
		return
	}
	b.unread[channel] = u
}

// posted notes a message the bot sent in channel: WhatsApp shows it in
// place of "composing…", so the refresh stops and off needs no call.
func (b *Bridge) posted(channel string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if cancel := b.typing[channel]; cancel != nil {
		cancel()
		delete(b.typing, channel)
	}
}

// readBeforeReply marks channel's accepted messages read before the bot
// writes there (a quick turn's reply, or one to messages queued during a
// turn): blue ticks before the answer, never after.
func (b *Bridge) readBeforeReply(ctx context.Context, channel string) {
	b.mu.Lock()
	unread := b.unread[channel]
	delete(b.unread, channel)
	b.mu.Unlock()
	b.markAllRead(ctx, unread)
}

// markAllRead sends the read receipts of msgs, one per chat and sender
// (WhatsApp takes several message ids of one sender at once), stamped with
// the newest message's time.
func (b *Bridge) markAllRead(ctx context.Context, msgs []types.MessageInfo) {
	type group struct {
		chat, sender types.JID
		ids          []types.MessageID
		at           time.Time
	}
	var groups []*group
	for _, info := range msgs {
		i := slices.IndexFunc(groups, func(g *group) bool { return g.chat == info.Chat && g.sender == info.Sender })
		if i < 0 {
			groups = append(groups, &group{chat: info.Chat, sender: info.Sender})
			i = len(groups) - 1
		}
		g := groups[i]
		g.ids = append(g.ids, info.ID)
		if info.Timestamp.After(g.at) {
			g.at = info.Timestamp
		}
	}
	for _, g := range groups {
		if err := b.cli.MarkRead(ctx, g.ids, g.at, g.chat, g.sender); err != nil {
			b.log.Debug("whatsapp mark read", "msg_ids", g.ids, "err", err)
		}
	}
}

// stopTyping ends every refresh loop (Run is ending).
func (b *Bridge) stopTyping() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for ch, cancel := range b.typing {
		cancel()
		delete(b.typing, ch)
	}
}
