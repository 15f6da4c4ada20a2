package whatsapp

import (
	"context"
	"fmt"
	"mime"
	"net/http"
	"path/filepath"
	"strings"

	"github.com/agentbridge/agentbridge/bridges"
	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
	"google.golang.org/protobuf/proto"
)

// inFile is an attachment of an inbound message and what downloading it
// needs.
type inFile struct {
	bridges.File
	msg whatsmeow.DownloadableMessage
}

// media is what FetchFile downloads later (nil for none).
func (f *inFile) media() whatsmeow.DownloadableMessage {
	if f == nil {
		return nil
	}
	return f.msg
}

// extFor is a file extension for a MIME type ("" if unknown).
func extFor(mimeType string) string {
	if exts, err := mime.ExtensionsByType(mimeType); err == nil && len(exts) > 0 {
		return exts[0]
	}
	return ""
}

// FetchFile implements bridges.FileFetcher: it downloads the media of an
// accepted message (File.ID is its message id), refusing files larger
// than max by their announced size (ErrTooLarge).
func (b *Bridge) FetchFile(ctx context.Context, f bridges.File, max int64) ([]byte, error) {
	rm, ok := b.received.Get(f.ID)
	if !ok || rm.media == nil {
		return nil, fmt.Errorf("whatsapp fetch %s: no media known for this message", f.ID)
	}
	if max > 0 && f.Size > max {
		return nil, fmt.Errorf("whatsapp fetch %s: %d bytes: %w", f.ID, f.Size, ErrTooLarge)
	}
	data, err := b.cli.Download(ctx, rm.media)
	if err != nil {
		return nil, fmt.Errorf("whatsapp fetch %s: %w", f.ID, err)
	}
	if max > 0 && int64(len(data)) > max {
		return nil, fmt.Errorf("whatsapp fetch %s: %d bytes: %w", f.ID, len(data), ErrTooLarge)
	}
	return data, nil
}

// maxCaptionRunes bounds a file's caption (its Comment, rendered).
const maxCaptionRunes = 1024

// UploadFile implements bridges.FileUploader (the agent's send_file): the
// file is encrypted and uploaded to WhatsApp's media servers, then sent
// as an image (JPEG, PNG, WebP: shown inline) or as a document with its
// name and MIME type (from the name's extension, else sniffed), with
// Comment as its caption. Like Post it refuses chats that never wrote to
// the bot and classifies errors (bridges.Permanent).
func (b *Bridge) UploadFile(ctx context.Context, key bridges.ConversationKey, f bridges.Upload) (_ bridges.MessageRef, err error) {
	defer func() { err = classify(err) }()
	chat, err := types.ParseJID(key.Channel)
	if err != nil || chat.User == "" {
		return bridges.MessageRef{}, fmt.Errorf("whatsapp upload: %w: conversation channel %q is not a chat", ErrBadMessage, key.Channel)
	}
	chat = chat.ToNonAD()
	name := filepath.Base(f.Name)
	if name == "." || name == "/" || len(f.Data) == 0 {
		return bridges.MessageRef{}, fmt.Errorf("whatsapp upload to %s: %w: no file name or no data", chat, ErrBadMessage)
	}
	if err := b.mayWrite(ctx, key); err != nil {
		return bridges.MessageRef{}, fmt.Errorf("whatsapp upload to %s: %w", chat, err)
	}
	mimeType := mime.TypeByExtension(filepath.Ext(name))
	if mimeType == "" {
		mimeType = http.DetectContentType(f.Data)
	}
	mimeType, _, _ = strings.Cut(mimeType, ";")
	image := mimeType == "image/jpeg" || mimeType == "image/png" || mimeType == "image/webp"
	kind := whatsmeow.MediaDocument
	if image {
		kind = whatsmeow.MediaImage
	}
	up, err := b.cli.Upload(ctx, f.Data, kind)
	if err != nil {
		return bridges.MessageRef{}, fmt.Errorf("whatsapp upload of %s to %s: %w", name, chat, err)
	}
	var caption *string
	if c := strings.TrimSpace(f.Comment); c != "" {
		caption = proto.String(clipRunes(toWhatsApp(c), maxCaptionRunes))
	}
	msg := &waE2E.Message{}
	if image {
		msg.ImageMessage = &waE2E.ImageMessage{URL: proto.String(up.URL), DirectPath: proto.String(up.DirectPath), MediaKey: up.MediaKey,
			FileEncSHA256: up.FileEncSHA256, FileSHA256: up.FileSHA256, FileLength: proto.Uint64(up.FileLength),
			Mimetype: proto.String(mimeType), Caption: caption, ContextInfo: b.withTimer(key.Channel, nil)}
	} else {
		msg.DocumentMessage = &waE2E.DocumentMessage{URL: proto.String(up.URL), DirectPath: proto.String(up.DirectPath), MediaKey: up.MediaKey,
			FileEncSHA256: up.FileEncSHA256, FileSHA256: up.FileSHA256, FileLength: proto.Uint64(up.FileLength),
			Mimetype: proto.String(mimeType), FileName: proto.String(name), Title: proto.String(name), Caption: caption,
			ContextInfo: b.withTimer(key.Channel, nil)}
	}
	b.readBeforeReply(ctx, key.Channel)
	if err := b.pace.wait(ctx, chat.String()); err != nil {
		return bridges.MessageRef{}, fmt.Errorf("whatsapp upload of %s to %s: %w", name, chat, err)
	}
	resp, err := b.cli.SendMessage(ctx, chat, msg)
	if err != nil {
		return bridges.MessageRef{}, fmt.Errorf("whatsapp upload of %s to %s: %w", name, chat, err)
	}
	b.remember(resp.ID, sentMsg{chat: chat, text: "📎 " + name, ref: resp.ID})
	b.posted(key.Channel)
	return bridges.MessageRef{Key: key, ID: resp.ID}, nil
}
