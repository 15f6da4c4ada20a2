package discord

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"mime"
	"net/http"
	"path/filepath"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/bwmarrin/discordgo"
)

// FetchFile implements bridges.FileFetcher: it downloads an attachment
// from its (CDN) URL without sending the bot token, reading at most max
// bytes; a larger file gives an error wrapping ErrTooLarge. max <= 0 means
// no limit.
func (b *Bridge) FetchFile(ctx context.Context, f bridges.File, max int64) ([]byte, error) {
	if max > 0 && f.Size > max {
		return nil, fmt.Errorf("discord attachment %q (%d bytes, limit %d): %w", f.Name, f.Size, max, ErrTooLarge)
	}
	if f.URL == "" {
		return nil, fmt.Errorf("discord attachment %q: no URL", f.Name)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, f.URL, nil)
	if err != nil {
		return nil, fmt.Errorf("discord attachment %q: %w", f.Name, err)
	}
	resp, err := b.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("download discord attachment %q: %w", f.Name, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("download discord attachment %q: HTTP %s", f.Name, resp.Status)
	}
	if max > 0 && resp.ContentLength > max {
		return nil, fmt.Errorf("discord attachment %q (%d bytes, limit %d): %w", f.Name, resp.ContentLength, max, ErrTooLarge)
	}
	var r io.Reader = resp.Body
	if max > 0 {
		r = io.LimitReader(resp.Body, max+1)
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("download discord attachment %q: %w", f.Name, err)
	}
	if max > 0 && int64(len(data)) > max {
		return nil, fmt.Errorf("discord attachment %q (over %d bytes): %w", f.Name, max, ErrTooLarge)
	}
	return data, nil
}

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
