package whatsapp

import (
	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"
)

// maxTimerChats bounds the chats whose disappearing-message timer (or
// addressing mode) is remembered.
const maxTimerChats = 10000

// noteAddressing remembers whether a group addresses its members by LID
// (then the bot quotes its own messages under its LID, not its number).
func (b *Bridge) noteAddressing(channel string, info types.MessageInfo) {
	if !info.IsGroup {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if info.AddressingMode != types.AddressingModeLID {
		delete(b.lidGroups, channel)
		return
	}
	if len(b.lidGroups) >= maxTimerChats {
		clear(b.lidGroups)
	}
	b.lidGroups[channel] = true
}

// lidGroup reports whether channel is a group addressed by LID.
func (b *Bridge) lidGroup(channel string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.lidGroups[channel]
}

// noteTimer remembers the disappearing-message timer of the chat an
// accepted message came from (its ContextInfo.Expiration, in seconds; 0 =
// off), so that the bot's messages there disappear like everyone's.
func (b *Bridge) noteTimer(channel string, e *events.Message, ci *waE2E.ContextInfo) {
	exp := ci.GetExpiration()
	if !e.IsEphemeral && ci == nil {
		return // no context: nothing is known about the timer
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if exp == 0 {
		delete(b.timers, channel)
		return
	}
	if len(b.timers) >= maxTimerChats {
		clear(b.timers)
	}
	b.timers[channel] = exp
}

// withTimer sets the chat's disappearing-message timer on an outgoing
// message's context (made if ci is nil); ci unchanged when the chat has none.
func (b *Bridge) withTimer(channel string, ci *waE2E.ContextInfo) *waE2E.ContextInfo {
	b.mu.Lock()
	exp := b.timers[channel]
	b.mu.Unlock()
	if exp == 0 {
		return ci
	}
	if ci == nil {
		ci = &waE2E.ContextInfo{}
	}
	ci.Expiration = &exp
	return ci
}
