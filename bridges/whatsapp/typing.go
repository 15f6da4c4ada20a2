package whatsapp

import (
	"context"
	"fmt"
	"time"

	"go.mau.fi/whatsmeow/types"

	"github.com/agentbridge/agentbridge/bridges"
)

// SetTyping implements bridges.Typer: on shows "composing…" in the chat
// and repeats it every TypingRefresh until off (WhatsApp drops it after
// ~25 s), which sends "paused". Like Post it refuses chats that never
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
	if cancel := b.typing[key.Channel]; cancel != nil {
		cancel()
		delete(b.typing, key.Channel)
	}
	var loopCtx context.Context
	if on && b.runCtx != nil {
		var cancel context.CancelFunc
		loopCtx, cancel = context.WithCancel(b.runCtx)
		b.typing[key.Channel] = cancel
	}
	b.mu.Unlock()
	if !on {
		if err := b.cli.SendChatPresence(ctx, chat, types.ChatPresencePaused, ""); err != nil {
			return fmt.Errorf("whatsapp typing off in %s: %w", chat, err)
		}
		return nil
	}
	if err := b.cli.SendChatPresence(ctx, chat, types.ChatPresenceComposing, ""); err != nil {
		return fmt.Errorf("whatsapp typing in %s: %w", chat, err)
	}
	if loopCtx != nil {
		go b.refreshTyping(loopCtx, chat)
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

// stopTyping ends every refresh loop (Run is ending).
func (b *Bridge) stopTyping() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for ch, cancel := range b.typing {
		cancel()
		delete(b.typing, ch)
	}
}
