package web

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"regexp"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/store"
)

// maxUploadBytes caps an uploaded image (the core forwards at most 5 MiB).
const maxUploadBytes = 5 << 20

// fileRE matches the id of an uploaded file.
var fileRE = regexp.MustCompile(`^f[a-z0-9]{8,64}$`)

// FetchFile implements bridges.FileFetcher: an uploaded image, from the
// store, at most max bytes (ErrTooLarge beyond; max <= 0: no cap).
func (c *Console) FetchFile(ctx context.Context, f bridges.File, max int64) ([]byte, error) {
	u, err := c.st.WebUpload(ctx, f.ID)
	if err != nil {
		return nil, fmt.Errorf("web fetch %s: %w", f.ID, err)
	}
	if max > 0 && int64(len(u.Data)) > max {
		return nil, fmt.Errorf("web upload %s (%d bytes, limit %d): %w", f.ID, len(u.Data), max, ErrTooLarge)
	}
	return u.Data, nil
}

// uploadTypes are the image types accepted, by sniffed content.
var uploadTypes = map[string]bool{"image/png": true, "image/jpeg": true, "image/gif": true, "image/webp": true}

// readUpload stores the request's image, if any. A non-zero status refuses
// the request with msg.
func (c *Console) readUpload(r *http.Request, key bridges.ConversationKey) (up *store.WebUpload, status int, msg string) {
	f, hdr, err := r.FormFile("image")
	switch {
	case errors.Is(err, http.ErrMissingFile), errors.Is(err, http.ErrNotMultipart):
		return nil, 0, ""
	case err != nil:
		return nil, http.StatusBadRequest, "bad upload"
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxUploadBytes+1))
	switch {
	case err != nil:
		return nil, http.StatusBadRequest, "bad upload"
	case len(data) == 0:
		return nil, 0, "" // an empty file input
	case len(data) > maxUploadBytes:
		return nil, http.StatusRequestEntityTooLarge, "image too large (at most 5 MB)"
	}
	mime := http.DetectContentType(data)
	if !uploadTypes[mime] {
		return nil, http.StatusUnsupportedMediaType, "only PNG, JPEG, GIF and WebP images can be sent"
	}
	return &store.WebUpload{
		ID: "f" + randomID(10), Key: store.ConversationKey(key), Name: oneLine(filepath.Base(hdr.Filename), 100), MimeType: mime, Data: data,
	}, 0, ""
}

// file serves an uploaded image to the user who sent it.
func (c *Console) file(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if c.bot == nil || !fileRE.MatchString(id) {
		http.NotFound(w, r)
		return
	}
	up, err := c.st.WebUpload(r.Context(), id)
	if err != nil || up.Key.Bot != c.bot.Name || up.Key.Channel != CurrentUser(r).Name {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", up.MimeType)
	w.Header().Set("Content-Security-Policy", "default-src 'none'; sandbox")
	w.Header().Set("Cache-Control", "private, max-age=3600")
	_, _ = w.Write(up.Data)
}
