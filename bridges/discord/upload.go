package discord

import (
	"bytes"
	"context"
	"fmt"
	"mime"
	"path/filepath"

	"github.com/bwmarrin/discordgo"

	"github.com/agentbridge/agentbridge/bridges"
)

// maxUploadBytes is the largest attachment UploadFile sends: Discord's
// limit for bots in servers without boosts (10 MiB).
const maxUploadBytes = 10 << 20

var (
	_ bridges.FileUploader  = (*Bridge)(nil)
	_ bridges.ThreadStarter = (*Bridge)(nil)
)

// UploadFile implements bridges.FileUploader: one message in the
// conversation's channel (its thread) carrying the file as an attachment
// (a multipart/form-data request with payload_json and files[0]), with the
// comment converted to Discord markdown as its content (cut to one
// message) and mentions disabled. Errors no retry can fix are marked
// bridges.Permanent.
func (b *Bridge) UploadFile(ctx context.Context, key bridges.ConversationKey, f bridges.Upload) (_ bridges.MessageRef, err error) {
	defer func() { err = classify(err) }()
	ch := channelOf(key)
	switch {
	case ch == "":
		return bridges.MessageRef{}, fmt.Errorf("discord upload: %w: conversation key has no channel", ErrBadMessage)
	case len(f.Data) > maxUploadBytes:
		return bridges.MessageRef{}, fmt.Errorf("discord upload %s to %s: %d bytes: %w", f.Name, ch, len(f.Data), ErrTooLarge)
	}
	content := ""
	if parts := splitMessage(toDiscord(f.Comment), maxContentRunes); len(parts) > 0 {
		content = parts[0]
	}
	ctype := mime.TypeByExtension(filepath.Ext(f.Name))
	if ctype == "" {
		ctype = "application/octet-stream"
	}
	msg, err := b.session.ChannelMessageSendComplex(ch, &discordgo.MessageSend{
		Content:         content,
		Files:           []*discordgo.File{{Name: f.Name, ContentType: ctype, Reader: bytes.NewReader(f.Data)}},
		AllowedMentions: noMentions(),
	}, discordgo.WithContext(ctx))
	if err != nil {
		return bridges.MessageRef{}, fmt.Errorf("discord upload %s to %s: %w", f.Name, ch, err)
	}
	return bridges.MessageRef{Key: key, ID: msg.ID}, nil
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
	key := b.startThread(ctx, posted, m.Text, ci)
	key.Bot = in.Bot
	return key, ref, nil
}
