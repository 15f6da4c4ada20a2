package discord

import (
	"context"
	"fmt"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/bwmarrin/discordgo"
)

// typer keeps one channel's typing indicator alive.
type typer struct {
	cancel context.CancelFunc
	done   chan struct{} // closed when its renewals have ended
}

func (t *typer) stop() { t.cancel() }

// SetTyping implements bridges.Typer. Discord shows "typing…" for about
// 10 s or until the bot posts, so while on the indicator is re-sent every
// 8 s (until SetTyping off, Run's end, or 30 minutes). The first indicator
// is sent before SetTyping returns; its error is returned. Off only stops
// the renewals (no call: Discord clears the indicator when the bot posts
// or after 10 s); once it returns, no renewal is sent any more.
func (b *Bridge) SetTyping(ctx context.Context, key bridges.ConversationKey, on bool) error {
	ch := channelOf(key)
	if ch == "" {
		return fmt.Errorf("discord typing: %w: conversation key has no channel", ErrBadMessage)
	}
	if !on {
		b.mu.Lock()
		t := b.typers[ch]
		if t != nil {
			t.stop()
			delete(b.typers, ch)
		}
		b.mu.Unlock()
		if t != nil {
			select { // a renewal in flight ends with its context
			case <-t.done:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return nil
	}
	if err := b.session.ChannelTyping(ch, discordgo.WithContext(ctx)); err != nil {
		return fmt.Errorf("discord typing in %s: %w", ch, err)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.running || b.typers[ch] != nil {
		return nil
	}
	tctx, cancel := context.WithTimeout(b.runCtx, b.typingMax)
	t := &typer{cancel: cancel, done: make(chan struct{})}
	b.typers[ch] = t
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		defer close(t.done)
		defer cancel()
		b.keepTyping(tctx, ch)
		b.mu.Lock()
		if b.typers[ch] == t {
			delete(b.typers, ch)
		}
		b.mu.Unlock()
	}()
	return nil
}

func (b *Bridge) keepTyping(ctx context.Context, ch string) {
	tick := time.NewTicker(b.typingEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			if err := b.session.ChannelTyping(ch, discordgo.WithContext(ctx)); err != nil && ctx.Err() == nil {
				b.log.Debug("discord typing", "channel", ch, "err", err)
			}
		}
	}
}
