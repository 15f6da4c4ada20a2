package discord

import (
	"context"
	"fmt"
	"io"
	"net/http"

	"github.com/agentbridge/agentbridge/bridges"
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
