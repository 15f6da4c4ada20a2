package whatsapp

import (
	"context"
	"fmt"

	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types/events"
	"google.golang.org/protobuf/proto"

	"github.com/agentbridge/agentbridge/bridges"
)

// Transcriber turns a voice note or audio file into text (config
// transcription, planned: the platform-depth issue). Transcribe may block
// for the length of a request; it never sees strangers' audio.
type Transcriber interface {
	Transcribe(ctx context.Context, data []byte, mimeType string) (string, error)
}

// noVoiceText is the reply to a voice note or audio file while no
// transcription is configured.
const noVoiceText = "I can't listen to voice notes yet — please type your message."

// onAudio handles a voice note or audio file of an allowed sender (in is
// its Inbound, without text). Without a Transcriber the sender gets a short
// reply quoting the note, and the note is marked read; with one, the
// transcript goes to the core as the message's text. It reports false when
// WhatsApp should deliver the message again.
func (b *Bridge) onAudio(ctx context.Context, h bridges.Handler, e *events.Message, in bridges.Inbound, audio *inFile, dedupe string) bool {
	if b.transcriber == nil {
		return b.answerAudio(ctx, e, in, noVoiceText, dedupe)
	}
	data, err := b.cli.Download(ctx, audio.msg)
	if err != nil {
		b.log.Warn("whatsapp voice note not downloaded", "key", in.Key, "msg_id", in.MsgID, "err", err)
		return false
	}
	text, err := b.transcriber.Transcribe(ctx, data, audio.MimeType)
	if err != nil || text == "" {
		b.log.Warn("whatsapp voice note not transcribed", "key", in.Key, "msg_id", in.MsgID, "err", err)
		return b.answerAudio(ctx, e, in, "I could not understand this voice note — please type your message.", dedupe)
	}
	in.Text = "[Voice note, transcribed] " + text
	b.received.Add(in.MsgID, receivedMsg{chat: e.Info.Chat.ToNonAD(), sender: e.Info.Sender.ToNonAD(), msg: e.Message})
	if err := h.HandleMessage(ctx, in); err != nil {
		b.log.Warn("whatsapp message not recorded", "key", in.Key, "msg_id", in.MsgID, "err", err)
		return false
	}
	b.seen.Add(dedupe, true)
	b.noteUnread(in.Key.Channel, e.Info)
	return true
}

// answerAudio marks the note read and answers it with text, quoting it.
// The sender is allowed and the chat just wrote to the bot (in a group:
// quoting the bot), so the reply is no first contact.
func (b *Bridge) answerAudio(ctx context.Context, e *events.Message, in bridges.Inbound, text, dedupe string) bool {
	chat := e.Info.Chat.ToNonAD()
	b.markRead(ctx, e.Info)
	msg := &waE2E.Message{ExtendedTextMessage: &waE2E.ExtendedTextMessage{Text: proto.String(text),
		ContextInfo: &waE2E.ContextInfo{StanzaID: proto.String(in.MsgID), Participant: proto.String(e.Info.Sender.ToNonAD().String()),
			QuotedMessage: e.Message}}}
	if err := b.pace.wait(ctx, chat.String()); err != nil {
		return false
	}
	// The id derives from the note's, so a redelivery re-sends the same reply.
	if _, err := b.cli.SendMessage(ctx, chat, msg, sendExtra(messageID("voice|"+chat.String()+"|"+in.MsgID, 0))...); err != nil {
		b.log.Warn("whatsapp voice note answer not sent", "key", in.Key, "msg_id", in.MsgID, "err", fmt.Errorf("send: %w", err))
		return false
	}
	b.seen.Add(dedupe, true)
	return true
}
