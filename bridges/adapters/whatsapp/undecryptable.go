package whatsapp

import (
	"context"
	"sync"
	"time"

	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"
	"google.golang.org/protobuf/proto"

	"github.com/agentbridge/agentbridge/bridges"
)

// notReadText tells a sender that a message could not be decrypted.
const notReadText = "⚠️ I could not read this message (WhatsApp could not decrypt it on the bot's device). Please send it again."

// recoveries are the undecryptable messages whose re-sent copy is awaited
// (whatsmeow asks the sender's and the bot's phone for it): when none
// arrives within the wait, the sender is told. Stop ends every wait and
// waits for a telling in progress.
type recoveries struct {
	mu      sync.Mutex
	pending map[string]*time.Timer // by dedupe key
	wg      sync.WaitGroup
	stopped bool
}

// onUndecryptable handles a message this device could not decrypt: it is
// logged and counted; from an allowed sender in a private chat, unless a
// decrypted copy arrives within b.recoverWait, the sender is asked to send
// it again. Messages WhatsApp hides on purpose (view-once elsewhere,
// DecryptFailHide) are only logged.
func (b *Bridge) onUndecryptable(ctx context.Context, h bridges.Handler, e *events.UndecryptableMessage) {
	info := e.Info
	b.log.Warn("whatsapp message could not be decrypted", "msg_id", info.ID, "chat", info.Chat.ToNonAD().String(),
		"user", info.Sender.ToNonAD().String(), "unavailable", e.IsUnavailable, "unavailable_type", string(e.UnavailableType),
		"fail_mode", string(e.DecryptFailMode))
	bridges.CountMessage(h, "undecryptable")
	if info.IsFromMe || info.IsGroup || e.DecryptFailMode == events.DecryptFailHide || e.UnavailableType != events.UnavailableTypeUnknown {
		return
	}
	user, mapped := b.phoneOf(ctx, info)
	key := bridges.ConversationKey{Bot: b.bot, Channel: channelOf(info.Chat.ToNonAD(), user, false)}
	if !mapped || !h.Allowed(key, user) {
		return // strangers get nothing, ever
	}
	dedupe := info.Chat.ToNonAD().String() + "|" + info.Sender.ToNonAD().String() + "|" + info.ID
	b.recov.mu.Lock()
	defer b.recov.mu.Unlock()
	if b.recov.stopped || b.recov.pending[dedupe] != nil {
		return
	}
	if b.recov.pending == nil {
		b.recov.pending = map[string]*time.Timer{}
	}
	b.recov.wg.Add(1)
	b.recov.pending[dedupe] = time.AfterFunc(b.recoverWait, func() {
		defer b.recov.wg.Done()
		b.recov.mu.Lock()
		_, waiting := b.recov.pending[dedupe]
		delete(b.recov.pending, dedupe)
		b.recov.mu.Unlock()
		if waiting {
			b.tellNotRead(ctx, info)
		}
	})
}

// recovered notes that the message with dedupe key arrived decrypted: its
// sender need not be told.
func (b *Bridge) recovered(dedupe string) {
	b.recov.mu.Lock()
	defer b.recov.mu.Unlock()
	if t := b.recov.pending[dedupe]; t != nil {
		delete(b.recov.pending, dedupe)
		if t.Stop() {
			b.recov.wg.Done()
		}
	}
}

// stopRecoveries ends every wait (Run is ending) and waits for a telling
// in progress.
func (b *Bridge) stopRecoveries() {
	b.recov.mu.Lock()
	b.recov.stopped = true
	for k, t := range b.recov.pending {
		delete(b.recov.pending, k)
		if t.Stop() {
			b.recov.wg.Done()
		}
	}
	b.recov.mu.Unlock()
	b.recov.wg.Wait()
}

// tellNotRead asks the sender of an undecryptable message to send it
// again, quoting it.
func (b *Bridge) tellNotRead(ctx context.Context, info types.MessageInfo) {
	chat := info.Chat.ToNonAD()
	msg := &waE2E.Message{ExtendedTextMessage: &waE2E.ExtendedTextMessage{Text: proto.String(notReadText),
		ContextInfo: &waE2E.ContextInfo{StanzaID: proto.String(info.ID), Participant: proto.String(info.Sender.ToNonAD().String())}}}
	if err := b.pace.wait(ctx, chat.String()); err != nil {
		return
	}
	if _, err := b.cli.SendMessage(ctx, chat, msg, sendExtra(messageID("undecryptable|"+chat.String()+"|"+info.ID, 0))...); err != nil {
		b.log.Warn("whatsapp could not tell a sender that a message was not read", "msg_id", info.ID, "err", err)
	}
}
