package slack

import (
	"bytes"
	"context"
	"fmt"
	"unicode/utf8"

	slackapi "github.com/slack-go/slack"

	"github.com/agentbridge/agentbridge/bridges"
)

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

// StartThread implements bridges.ThreadStarter: the message is posted at
// the top of the channel and its ts becomes the thread of the new
// conversation (like a mention that starts a conversation).
func (b *Bridge) StartThread(ctx context.Context, in bridges.ConversationKey, m bridges.Message) (bridges.ConversationKey, bridges.MessageRef, error) {
	in.Thread = ""
	ref, err := b.Post(ctx, in, m)
	if err != nil {
		return in, ref, err
	}
	return bridges.ConversationKey{Bot: in.Bot, Channel: in.Channel, Thread: ref.ID}, ref, nil
}
