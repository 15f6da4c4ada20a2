package slack

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"unicode/utf8"

	slackapi "github.com/slack-go/slack"

	"github.com/agentbridge/agentbridge/bridges"
)

// FetchFile implements bridges.FileFetcher: it downloads an inbound
// file's url_private_download with the bot token (sent only to https
// Slack hosts or the configured API host) and reads at most max bytes;
// a bigger file gives an error wrapping ErrFileTooLarge. max <= 0 means
// no cap.
func (b *Bridge) FetchFile(ctx context.Context, f bridges.File, max int64) ([]byte, error) {
	if f.URL == "" {
		return nil, fmt.Errorf("slack file %s (%s): no download URL", f.ID, f.Name)
	}
	if max > 0 && f.Size > max {
		return nil, fmt.Errorf("slack file %s (%s) is %d bytes, cap %d: %w", f.ID, f.Name, f.Size, max, ErrFileTooLarge)
	}
	w := &cappedBuffer{max: max}
	if err := b.api.GetFileContext(ctx, f.URL, w); err != nil {
		if errors.Is(err, ErrFileTooLarge) {
			return nil, fmt.Errorf("slack file %s (%s) is over the %d byte cap: %w", f.ID, f.Name, max, ErrFileTooLarge)
		}
		return nil, fmt.Errorf("slack download file %s (%s): %s", f.ID, f.Name, b.redact.Err(err))
	}
	return w.buf.Bytes(), nil
}

// cappedBuffer collects up to max bytes (no cap when max <= 0) and fails
// with ErrFileTooLarge beyond.
type cappedBuffer struct {
	buf bytes.Buffer
	max int64
}

func (c *cappedBuffer) Write(p []byte) (int, error) {
	if c.max > 0 && int64(c.buf.Len())+int64(len(p)) > c.max {
		return 0, ErrFileTooLarge
	}
	return c.buf.Write(p)
}

// maxUploadBytes is the largest file UploadFile sends (Slack takes up to
// 1 GB; the core caps what agents send far below that).
const maxUploadBytes = 1 << 30

var (
	_ bridges.FileUploader  = (*Bridge)(nil)
	_ bridges.ThreadStarter = (*Bridge)(nil)
)

// UploadFile implements bridges.FileUploader with Slack's external upload,
// the three calls of slack-go's UploadFile: files.getUploadURLExternal,
// the upload of the bytes, and files.completeUploadExternal, which shares
// the file into the conversation's channel and thread with the comment
// (converted to mrkdwn) as its message. A 429 is retried after
// Retry-After until ctx ends. The returned ref has no ID: Slack does not
// say which message carries the file.
func (b *Bridge) UploadFile(ctx context.Context, key bridges.ConversationKey, f bridges.Upload) (bridges.MessageRef, error) {
	switch {
	case len(f.Data) == 0:
		return bridges.MessageRef{}, bridges.Permanent(fmt.Errorf("slack upload %s to %s: %w: empty file", f.Name, key, ErrBadUpload))
	case len(f.Data) > maxUploadBytes:
		return bridges.MessageRef{}, bridges.Permanent(fmt.Errorf("slack upload %s to %s: %w: %d bytes", f.Name, key, ErrBadUpload, len(f.Data)))
	}
	comment := ToMrkdwn(f.Comment)
	if utf8.RuneCountInString(comment) > maxTextRunes {
		comment = splitMrkdwn(comment, maxTextRunes)[0]
	}
	err := b.retry(ctx, "files.upload", nil, func() error {
		_, err := b.api.UploadFileContext(ctx, slackapi.UploadFileParameters{
			Reader: bytes.NewReader(f.Data), FileSize: len(f.Data), Filename: f.Name, Title: f.Name,
			Channel: key.Channel, ThreadTimestamp: key.Thread, InitialComment: comment,
		})
		return err
	})
	if err != nil {
		// The upload URL error may quote the URL; keep tokens out of it.
		return bridges.MessageRef{}, classify(err, fmt.Errorf("slack upload %s to %s: %s", f.Name, key, b.redact.Err(err)))
	}
	return bridges.MessageRef{Key: key}, nil
}
