// Package uploads brings the files people send to the agent: it fetches
// them through the platform (Fetch, acting through Host, which the
// conversation's worker implements in bridges/core), gives images as
// image blocks, transcribes voice notes (Transcriber), and saves the
// other files for the agent to read: in the uploads directory of the
// session's private state, which the agent can write, so never through a
// link it planted. It also holds the size caps of what the agent gets and
// the ledger's encoding of a message's files.
package uploads

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Size caps: what the agent gets at most.
const (
	// MaxImageBytes caps an image given to the agent as an image block.
	MaxImageBytes = 5 << 20
	// MaxDocumentBytes caps any other file, saved for the agent to read.
	MaxDocumentBytes = 20 << 20
)

// IsImage reports whether files of mimeType go to the agent as image
// blocks (the formats the model takes); other images are saved like
// documents.
func IsImage(mimeType string) bool {
	switch mimeType {
	case "image/jpeg", "image/png", "image/gif", "image/webp":
		return true
	}
	return false
}

// Limit is the size cap of a file of mimeType.
func Limit(mimeType string) int64 {
	if IsImage(mimeType) {
		return MaxImageBytes
	}
	return MaxDocumentBytes
}

// Save writes data as dir/<msgID>-<name> (owner-only) and returns
// the path. The name is reduced to a safe base name.
//
// dir lies in the session's private state, which the agent can write: it
// may have planted a symbolic link where the uploads directory or the file
// will be. So the file is created through an os.Root opened on dir's
// parent (a link leading out of it is refused), never through a link at
// its own name (O_EXCL; a leftover entry — a redelivered message's earlier
// copy, or something planted — is removed first, as a name, not followed).
func Save(dir, msgID, name string, data []byte) (string, error) {
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
	file := SafeName(msgID) + "-" + SafeName(name)
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

// SafeName keeps a file name's letters, digits, '.', '-' and '_' (the
// rest become '_'), without leading dots, at most 100 bytes; "file" if
// nothing is left.
func SafeName(name string) string {
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
