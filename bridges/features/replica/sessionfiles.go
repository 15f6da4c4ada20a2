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
	"syscall"

	"github.com/agentbridge/agentbridge/bridges/core/sessiondir"
	"github.com/agentbridge/agentbridge/store"
)

// sessionSubdir is the part of a Claude Code session's state directory
// that holds its transcripts: the CLI's config dir (agent:
// CLAUDE_CONFIG_DIR = <state dir>/claude) keeps
// projects/<cwd>/<session>.jsonl, which --resume reads.
const sessionSubdir = "claude/projects"

// The stored archive of a session says how it is laid out in its gzip
// header's comment (written by the bridge, never by the agent):
//
//   - layoutClaude (no comment, as earlier versions stored it): a Claude
//     Code session's transcripts, names relative to sessionSubdir.
//   - layoutACP: an ACP agent's session (sessiondir.IsACP at the save),
//     names relative to the state directory, each under acp/ (the
//     bridge's record of the agent's session id and cost) or home/ (the
//     agent's private HOME, where its own session store is, without the
//     caches sessiondir.CarriedACP leaves out). A profile with a shared
//     home keeps its sessions in that home: only acp/ is carried, so
//     unless that home is shared between the machines too, session/load
//     elsewhere finds nothing and the conversation starts fresh, as the
//     agent's client tells the thread.
const (
	layoutClaude = ""
	layoutACP    = "agentbridge session state: acp"
)

// maxSessionBytes bounds the files of one session kept in the store
// (uncompressed): a larger session is not saved (logged); another
// replica resumes it from the last state stored, or starts it afresh
// (telling the thread) when none was.
const maxSessionBytes = 64 << 20

// SaveSession implements ownership.Ownership: it packs the session's
// files (packState: regular files only; the agent can write this
// directory, so links are never followed) into a gzip'd tar and stores it under the
// conversation's lease, so that a replica that lost the lease cannot
// overwrite the new holder's state. Errors are logged: the turn is over
// either way, and the session still resumes on this replica.
func (r *Replica) SaveSession(ctx context.Context, id, sessionID, stateDir string) {
	l, ok := r.leaseOf(id)
	if !ok {
		r.log.Warn("session files not saved: the conversation's lease is not held", "conversation", id)
		return
	}
	data, err := packState(stateDir)
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
	if err := unpackSession(st.Data, stateDir); err != nil {
		return "", fmt.Errorf("restore session %s: %w", sessionID, err)
	}
	sum := sha256.Sum256(st.Data)
	stamp := hex.EncodeToString(sum[:])
	r.log.Debug("session files restored from the store", "conversation", id, "session", sessionID,
		"bytes", len(st.Data), "stamp", stamp[:12])
	return stamp, nil
}

// packState packs the files of the session whose state directory is dir,
// laid out as its kind keeps them: an ACP agent's (sessiondir.IsACP: the
// bridge recorded the agent's session id) as layoutACP, any other as
// layoutClaude — exactly the transcripts under sessionSubdir. It returns
// nil when there is nothing to keep.
func packState(dir string) ([]byte, error) {
	if sessiondir.IsACP(dir) {
		return packSession(dir, ".", layoutACP, sessiondir.CarriedACP)
	}
	return packSession(dir, sessionSubdir, layoutClaude, nil)
}

// entryOverhead is what each file counts against maxSessionBytes besides
// its content (a tar header's size), so that a mass of empty files is
// bounded too.
const entryOverhead = 512

// packSession returns the regular files under sub of dir that keep
// accepts (all when nil; asked of each directory and file, by its path
// relative to dir) as a gzip'd tar whose header comment is layout, or nil
// when there are none. The agent can write there: the walk stays inside
// dir (os.Root) and takes no links; a file is opened without blocking (a
// FIFO swapped in after the walk saw a regular file cannot stall it) and
// taken only if it is still a regular file. Over maxSessionBytes it fails.
func packSession(dir, sub, layout string, keep func(string) bool) ([]byte, error) {
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
	zw.Comment = layout
	tw := tar.NewWriter(zw)
	files, total := 0, int64(0)
	err = fs.WalkDir(root.FS(), sub, func(p string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) && p == sub {
			return fs.SkipAll
		}
		if err != nil {
			return err
		}
		if keep != nil && p != "." && !keep(p) {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		f, err := root.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0)
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
		if total += info.Size() + entryOverhead; total > maxSessionBytes {
			return fmt.Errorf("session files exceed %d MiB", maxSessionBytes>>20)
		}
		if err := tw.WriteHeader(&tar.Header{Name: strings.TrimPrefix(p, sub+"/"), Mode: fileMode(info.Mode()),
			Size: info.Size(), ModTime: info.ModTime(), Typeflag: tar.TypeReg}); err != nil {
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

// fileMode is the mode a file is stored and restored with: private to
// the bridge's user, executable by it when it was (a script in the
// agent's home stays one).
func fileMode(m fs.FileMode) int64 {
	if m&0o100 != 0 {
		return 0o700
	}
	return 0o600
}

// unpackSession writes the regular files of a packSession archive into
// dir, inside dir only (os.Root), under the subdirectory its layout says:
// sessionSubdir for layoutClaude; for layoutACP each name must be one
// sessiondir.CarriedACP accepts. Names must be clean relative paths. On
// the way to each file, whatever is not a directory (a link, a file, a
// FIFO the agent left in this replica's copy) is removed, so no write
// is redirected, not even inside dir; a file replaces what is at its
// name. Files the archive does not name are left as they are.
func unpackSession(data []byte, dir string) error {
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
	sub, keep := sessionSubdir, func(string) bool { return true }
	switch zr.Comment {
	case layoutClaude:
	case layoutACP:
		sub, keep = ".", sessiondir.CarriedACP
	default:
		return fmt.Errorf("unpack session files: unknown layout %q", zr.Comment)
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
		if h.Typeflag != tar.TypeReg || !fs.ValidPath(name) || name == "." || !keep(name) {
			return fmt.Errorf("unpack session files: refused entry %q", name)
		}
		if total += h.Size + entryOverhead; total > maxSessionBytes {
			return fmt.Errorf("unpack session files: more than %d MiB", maxSessionBytes>>20)
		}
		dst := path.Join(sub, name)
		if err := mkdirs(root, path.Dir(dst)); err != nil {
			return fmt.Errorf("unpack session files: %w", err)
		}
		if err := writeFile(root, dst, tr, h.Size, fs.FileMode(fileMode(fs.FileMode(h.Mode)))); err != nil {
			return fmt.Errorf("unpack session files: %w", err)
		}
	}
}

// mkdirs makes directory d of root and its parents, one component at a
// time: a component that is there but not a directory (a link, even one
// that stays inside root, a file, a FIFO) is removed first, so that
// nothing written below d lands elsewhere.
func mkdirs(root *os.Root, d string) error {
	if d == "." {
		return nil
	}
	if err := mkdirs(root, path.Dir(d)); err != nil {
		return err
	}
	info, err := root.Lstat(d)
	switch {
	case err == nil && info.IsDir():
		return nil
	case err == nil:
		if err := root.Remove(d); err != nil {
			return err
		}
	case !errors.Is(err, fs.ErrNotExist):
		return err
	}
	return root.Mkdir(d, 0o700)
}

// writeFile replaces dst in root with n bytes of r (mode perm), through a
// temporary file and a rename: a link at dst is replaced, not followed,
// and a directory there is removed first.
func writeFile(root *os.Root, dst string, r io.Reader, n int64, perm fs.FileMode) error {
	if info, err := root.Lstat(dst); err == nil && info.IsDir() {
		if err := root.RemoveAll(dst); err != nil {
			return err
		}
	}
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	tmp := path.Join(path.Dir(dst), ".restore-"+hex.EncodeToString(b))
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
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
