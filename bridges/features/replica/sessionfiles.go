package replica

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"

	"github.com/agentbridge/agentbridge/store"
)

// sessionSubdir is the part of a session's state directory that holds its
// transcripts: the CLI's config dir (agent: CLAUDE_CONFIG_DIR = <state
// dir>/claude) keeps projects/<cwd>/<session>.jsonl, which --resume reads.
const sessionSubdir = "claude/projects"

// maxSessionBytes bounds the files of one session kept in the store
// (uncompressed): a larger session is not saved (logged), and its resume
// on another replica starts afresh.
const maxSessionBytes = 64 << 20

// SaveSession implements ownership.Ownership: it packs the session's
// transcripts (regular files only: the agent can write this directory, so
// links are never followed) into a gzip'd tar and stores it under the
// conversation's lease, so that a replica that lost the lease cannot
// overwrite the new holder's state. Errors are logged: the turn is over
// either way, and the session still resumes on this replica.
func (r *Replica) SaveSession(ctx context.Context, id, sessionID, stateDir string) {
	l, ok := r.leaseOf(id)
	if !ok {
		r.log.Warn("session files not saved: the conversation's lease is not held", "conversation", id)
		return
	}
	data, err := packSession(stateDir, sessionSubdir)
	if err == nil && data == nil {
		return // nothing written yet
	}
	if err == nil {
		err = r.st.PutSessionState(ctx, &l, store.SessionState{SessionID: sessionID, ConversationID: id, Data: data})
	}
	if err != nil {
		r.log.Warn("save the session's files to the store", "conversation", id, "session", sessionID, "err", err)
	}
}

// RestoreSession implements ownership.Ownership: it writes the stored files of
// the session into stateDir, replacing what is there (the store has the
// state after the session's last turn, wherever it ran), and returns their
// stamp: the SHA-256 of the stored archive, "" when nothing is stored.
// Nothing stored is not an error: the session never finished a turn on
// any replica.
func (r *Replica) RestoreSession(ctx context.Context, id, sessionID, stateDir string) (string, error) {
	st, err := r.st.GetSessionState(ctx, sessionID)
	if errors.Is(err, store.ErrNotFound) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("restore session %s: %w", sessionID, err)
	}
	if err := unpackSession(st.Data, stateDir, sessionSubdir); err != nil {
		return "", fmt.Errorf("restore session %s: %w", sessionID, err)
	}
	sum := sha256.Sum256(st.Data)
	stamp := hex.EncodeToString(sum[:])
	r.log.Debug("session files restored from the store", "conversation", id, "session", sessionID,
		"bytes", len(st.Data), "stamp", stamp[:12])
	return stamp, nil
}

// packSession returns the regular files under sub of dir as a gzip'd tar,
// or nil when there are none. The agent can write there: the walk stays
// inside dir (os.Root) and takes no links, so nothing outside is read.
func packSession(dir, sub string) ([]byte, error) {
	root, err := os.OpenRoot(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("pack session files: %w", err)
	}
	defer root.Close()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	files, total := 0, int64(0)
	err = fs.WalkDir(root.FS(), sub, func(p string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) && p == sub {
			return fs.SkipAll
		}
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		f, err := root.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		info, err := f.Stat()
		if err != nil {
			return err
		}
		if !info.Mode().IsRegular() {
			return nil // replaced by something else since the walk saw it
		}
		if total += info.Size(); total > maxSessionBytes {
			return fmt.Errorf("session files exceed %d MiB", maxSessionBytes>>20)
		}
		if err := tw.WriteHeader(&tar.Header{Name: strings.TrimPrefix(p, sub+"/"), Mode: 0o600, Size: info.Size(),
			ModTime: info.ModTime(), Typeflag: tar.TypeReg}); err != nil {
			return err
		}
		if _, err := io.CopyN(tw, f, info.Size()); err != nil {
			return err
		}
		files++
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("pack session files: %w", err)
	}
	if err := errors.Join(tw.Close(), zw.Close()); err != nil {
		return nil, fmt.Errorf("pack session files: %w", err)
	}
	if files == 0 {
		return nil, nil
	}
	return buf.Bytes(), nil
}

// unpackSession writes the regular files of a packSession archive under
// sub of dir, inside dir only (os.Root: a link the agent planted is not
// followed out of it). Names must be clean relative paths.
func unpackSession(data []byte, dir, sub string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("unpack session files: %w", err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return fmt.Errorf("unpack session files: %w", err)
	}
	defer root.Close()
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("unpack session files: %w", err)
	}
	tr := tar.NewReader(zr)
	var total int64
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("unpack session files: %w", err)
		}
		name := h.Name
		if h.Typeflag != tar.TypeReg || !fs.ValidPath(name) || name == "." {
			return fmt.Errorf("unpack session files: refused entry %q", name)
		}
		if total += h.Size; total > maxSessionBytes {
			return fmt.Errorf("unpack session files: more than %d MiB", maxSessionBytes>>20)
		}
		dst := path.Join(sub, name)
		if err := root.MkdirAll(path.Dir(dst), 0o700); err != nil {
			return fmt.Errorf("unpack session files: %w", err)
		}
		if err := writeFile(root, dst, tr, h.Size); err != nil {
			return fmt.Errorf("unpack session files: %w", err)
		}
	}
}

// writeFile replaces dst in root with n bytes of r, through a temporary
// file and a rename: a link at dst is replaced, not followed.
func writeFile(root *os.Root, dst string, r io.Reader, n int64) error {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	tmp := path.Join(path.Dir(dst), ".restore-"+hex.EncodeToString(b))
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = io.CopyN(f, r, n)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = root.Rename(tmp, dst)
	}
	if err != nil {
		_ = root.Remove(tmp)
	}
	return err
}
