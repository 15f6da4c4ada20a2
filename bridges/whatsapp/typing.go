package whatsapp

import (
	"context"
	"fmt"
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
// messages read (their receipts wait for it: a quick turn's reply is its
// only call) and shows "composing…", repeated every TypingRefresh until
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
	for _, info := range unread {
		b.markRead(ctx, info)
	}
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

// posted notes a message the bot sent in channel: WhatsApp shows it in
// place of "composing…", so the refresh stops and off needs no call, and
// the reply tells that the messages were seen (their receipts are
// dropped).
func (b *Bridge) posted(channel string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if cancel := b.typing[channel]; cancel != nil {
		cancel()
		delete(b.typing, channel)
	}
	delete(b.unread, channel)
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
