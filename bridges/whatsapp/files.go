package whatsapp

import (
	"context"
	"fmt"
	"mime"

	"go.mau.fi/whatsmeow"

	"github.com/agentbridge/agentbridge/bridges"
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
