package core

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/bridges"
)

// Attachment size caps: what the agent gets at most.
const (
	// maxImageBytes caps an image given to the agent as an image block.
	maxImageBytes = 5 << 20
	// MaxDocumentBytes caps any other file, saved for the agent to read.
	MaxDocumentBytes = 20 << 20
)

// UploadsDir is the directory, inside a session's private state
// (data_dir/sessions/<id>), where the files people send are saved for the
// agent; the sandbox lets the agent see it at the same path.
const UploadsDir = "uploads"

// imageTypes are the image formats the model takes as image blocks; other
// images are saved like documents.
var imageTypes = map[string]bool{"image/jpeg": true, "image/png": true, "image/gif": true, "image/webp": true}

// fetchAttachments downloads the attachments of ledger message m through
// the platform's FileFetcher: images go to the agent as image blocks,
// other files are saved in the session's uploads directory and named to
// the agent by path. A file larger than its cap (by the size the platform
// announced) is not downloaded: the conversation is told why, and the
// agent gets a note. Every file the agent does not get is noted for it.
func (cv *conversation) fetchAttachments(ctx context.Context, msgID string, files []bridges.File) ([]streamjson.Image, []string) {
	ff, _ := cv.platform.(bridges.FileFetcher)
	var imgs []streamjson.Image
	var notes []string
	for _, f := range files {
		image := imageTypes[f.MimeType]
		limit := int64(MaxDocumentBytes)
		if image {
			limit = maxImageBytes
		}
		dir := cv.uploadsDir()
		switch {
		case ff == nil || !image && dir == "":
			notes = append(notes, fmt.Sprintf("[attachment not forwarded: %s (%s)]", f.Name, f.MimeType))
			continue
		case f.Size > limit:
			cv.log.Info("attachment refused: too large", "file", f.Name, "bytes", f.Size, "limit", limit)
			cv.notice(ctx, fmt.Sprintf("📎 %s is too large (%s): files up to %s reach the agent.", codeSpan(f.Name), byteSize(f.Size), byteSize(limit)))
			notes = append(notes, fmt.Sprintf("[attachment not forwarded: %s is larger than %s]", f.Name, byteSize(limit)))
			continue
		}
		data, err := ff.FetchFile(ctx, f, limit)
		if err != nil {
			cv.log.Warn("fetch attachment", "file", f.Name, "err", err)
			notes = append(notes, fmt.Sprintf("[attachment could not be fetched: %s]", f.Name))
			continue
		}
		if image {
			imgs = append(imgs, streamjson.Image{MediaType: f.MimeType, Data: data})
			continue
		}
		path, err := saveUpload(dir, msgID, f.Name, data)
		if err != nil {
			cv.log.Error("save attachment for the agent", "file", f.Name, "err", err)
			notes = append(notes, fmt.Sprintf("[attachment could not be saved: %s]", f.Name))
			continue
		}
		notes = append(notes, fmt.Sprintf("[attached file saved for you at %s (%s, %s)]", path, orDefault(f.MimeType, "unknown type"), byteSize(int64(len(data)))))
	}
	return imgs, notes
}

// uploadsDir is where this conversation's session keeps uploads, "" when
// the bridge keeps no session state (no data_dir).
func (cv *conversation) uploadsDir() string {
	if cv.core.cfg().DataDir == "" || cv.row.SessionID == "" {
		return ""
	}
	dir, err := filepath.Abs(filepath.Join(cv.core.cfg().DataDir, SessionsDir, cv.row.SessionID, UploadsDir))
	if err != nil {
		return ""
	}
	return dir
}

// saveUpload writes data as dir/<msgID>-<name> (owner-only) and returns
// the path. The name is reduced to a safe base name.
//
// dir lies in the session's private state, which the agent can write: it
// may have planted a symbolic link where the uploads directory or the file
// will be. So the file is created through an os.Root opened on dir's
// parent (a link leading out of it is refused), never through a link at
// its own name (O_EXCL; a leftover entry — a redelivered message's earlier
// copy, or something planted — is removed first, as a name, not followed).
func saveUpload(dir, msgID, name string, data []byte) (string, error) {
	parent, sub := filepath.Dir(dir), filepath.Base(dir)
	if err := os.MkdirAll(parent, 0o700); err != nil {
		return "", fmt.Errorf("create session directory: %w", err)
	}
	root, err := os.OpenRoot(parent)
	if err != nil {
		return "", fmt.Errorf("open session directory: %w", err)
	}
	defer root.Close()
	if err := root.Mkdir(sub, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", fmt.Errorf("create uploads directory: %w", err)
	}
	file := safeFileName(msgID) + "-" + safeFileName(name)
	rel := filepath.Join(sub, file)
	if err := root.Remove(rel); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("save upload: clear %s: %w", file, err)
	}
	f, err := root.OpenFile(rel, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", fmt.Errorf("save upload: %w", err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return "", fmt.Errorf("save upload: %w", err)
	}
	if err := f.Close(); err != nil {
		return "", fmt.Errorf("save upload: %w", err)
	}
	return filepath.Join(dir, file), nil
}

// safeFileName keeps a file name's letters, digits, '.', '-' and '_' (the
// rest become '_'), without leading dots, at most 100 bytes; "file" if
// nothing is left.
func safeFileName(name string) string {
	name = filepath.Base(strings.ReplaceAll(name, "\\", "/"))
	b := []byte(name)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-' || c == '_') {
			b[i] = '_'
		}
	}
	s := strings.TrimLeft(string(b), ".")
	if len(s) > 100 {
		s = s[len(s)-100:]
	}
	if s == "" || s == "_" {
		return "file"
	}
	return s
}

// byteSize renders n bytes compactly: "812 B", "14.2 KB", "25.0 MB".
func byteSize(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	default:
		return fmt.Sprintf("%d B", n)
	}
}
