package web

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core/access"
	"github.com/agentbridge/agentbridge/internal/textcut"
	"github.com/agentbridge/agentbridge/store"
)

// maxImageBytes caps an uploaded image: the core gives the agent images up
// to 5 MiB as image blocks (like Slack's and Discord's).
const maxImageBytes = 5 << 20

// fileRE matches the id of an uploaded file.
var fileRE = regexp.MustCompile(`^f[a-z0-9]{8,64}$`)

// FetchFile implements bridges.FileFetcher: an uploaded file, from the
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

// imageTypes are the image types accepted, by sniffed content: the agent
// gets them as image blocks.
var imageTypes = map[string]bool{"image/png": true, "image/jpeg": true, "image/gif": true, "image/webp": true}

func isImage(mime string) bool { return imageTypes[mime] }

// uploadAccept is the file input's accept list: images, PDFs, text and
// code. The server decides by content (uploadType), not by this list.
const uploadAccept = "image/png,image/jpeg,image/gif,image/webp,application/pdf,text/*,.md,.txt,.csv,.json,.yaml,.yml,.toml," +
	".go,.py,.js,.ts,.tsx,.jsx,.java,.kt,.c,.h,.cc,.cpp,.hpp,.rs,.rb,.php,.sh,.sql,.html,.css,.xml,.diff,.patch,.log"

// uploadType is the type a file is given to the agent as, by its content
// (never by its name or the browser's word): one of the image types,
// application/pdf, or text/plain for any UTF-8 text without NUL bytes
// (text and source code of any language). "" refuses it.
func uploadType(data []byte) string {
	mime := http.DetectContentType(data)
	switch {
	case imageTypes[mime]:
		return mime
	case mime == "application/pdf":
		return mime
	case utf8.Valid(data) && !strings.ContainsRune(string(data), 0):
		return "text/plain"
	}
	return ""
}

// readUpload stores nothing yet: it reads the request's file (form field
// "file", or "image" from older pages), if any. A non-zero status refuses
// the request with msg.
func (c *Console) readUpload(r *http.Request, key bridges.ConversationKey) (up *store.WebUpload, status int, msg string) {
	f, hdr, err := r.FormFile("file")
	if errors.Is(err, http.ErrMissingFile) {
		f, hdr, err = r.FormFile("image")
	}
	switch {
	case errors.Is(err, http.ErrMissingFile), errors.Is(err, http.ErrNotMultipart):
		return nil, 0, ""
	case err != nil:
		return nil, http.StatusBadRequest, "bad upload"
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, c.maxUpload+1))
	switch {
	case err != nil:
		return nil, http.StatusBadRequest, "bad upload"
	case len(data) == 0:
		return nil, 0, "" // an empty file input
	case int64(len(data)) > c.maxUpload:
		return nil, http.StatusRequestEntityTooLarge, "file too large (at most " + uploadMB(c.maxUpload) + " MB)"
	}
	mime := uploadType(data)
	switch {
	case mime == "":
		return nil, http.StatusUnsupportedMediaType, "only images (PNG, JPEG, GIF, WebP), PDFs and text or code files can be sent"
	case isImage(mime) && len(data) > maxImageBytes:
		return nil, http.StatusRequestEntityTooLarge, "image too large (at most 5 MB)"
	}
	name := textcut.OneLine(filepath.Base(hdr.Filename), 100)
	if name == "" || name == "." || name == string(filepath.Separator) {
		name = "pasted"
	}
	return &store.WebUpload{
		ID: "f" + randomID(10), Key: store.ConversationKey(key), Name: name, MimeType: mime, Data: data,
	}, 0, ""
}

// file serves an uploaded file to the people who see its conversation:
// images inline, other files as a download (never rendered by the
// browser: an uploaded HTML file must not run on the console's origin).
func (c *Console) file(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	bot := c.bot.Load()
	if bot == nil || !fileRE.MatchString(id) {
		http.NotFound(w, r)
		return
	}
	up, err := c.st.WebUpload(r.Context(), id)
	if err != nil || up.Key.Bot != bot.Name {
		http.NotFound(w, r)
		return
	}
	if !c.access.May(r.Context(), c.person(r), access.Conv{Key: bridges.ConversationKey(up.Key)}, access.See) {
		http.NotFound(w, r)
		return
	}
	if isImage(up.MimeType) {
		w.Header().Set("Content-Type", up.MimeType)
	} else {
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Disposition", "attachment; filename="+strconv.Quote(asciiName(up.Name)))
	}
	w.Header().Set("Content-Security-Policy", "default-src 'none'; sandbox")
	w.Header().Set("Cache-Control", "private, max-age=3600")
	_, _ = w.Write(up.Data)
}

// asciiName keeps the printable ASCII of a file name for a header.
func asciiName(name string) string {
	var b strings.Builder
	for _, r := range name {
		if r > 0x20 && r < 0x7f && r != '"' && r != '\\' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// uploadMB shows an upload limit in MB ("10", "2.5").
func uploadMB(n int64) string {
	return strconv.FormatFloat(float64(n)/(1<<20), 'f', -1, 64)
}

// megabytesOrKB shows a file's size for people.
func megabytesOrKB(n int64) string {
	if n < 1<<20 {
		return strconv.FormatInt((n+1023)/1024, 10) + " KB"
	}
	return strconv.FormatFloat(float64(n)/(1<<20), 'f', 1, 64) + " MB"
}
