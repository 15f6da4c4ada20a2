package slack

import (
	"bytes"
	"context"
	"errors"
	"fmt"

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
