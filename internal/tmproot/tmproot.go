// Package tmproot keeps the temporary directories of one bridge's agents
// under one root the bridge can find again: a fresh directory in the
// system's temporary directory whose path is recorded in the bridge's
// data_dir. A bridge that ends normally removes its root (Close); one
// that is killed (SIGKILL, a crash, a power cut) leaves it behind, and the
// next bridge on the same data_dir removes it when it opens its own. The
// data_dir's lock (internal/dirlock) is what makes the record one bridge's
// alone: Open must be called while holding it.
package tmproot

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
)

// RecordName is the file in data_dir that holds the path of the root in use.
const RecordName = "agent-tmp.path"

// Prefix begins the name of every root; a recorded path whose name does
// not begin with it is never removed.
const Prefix = "agentbridge-run-"

// Root is one bridge's directory for its agents' temporary directories.
type Root struct {
	dir    string
	record string
}

// Open removes the root recorded in dataDir, if a bridge left one (it must
// be a directory named Prefix…, not a link, owned by this user: anything
// else is left alone and logged), then makes a new root in parent (""
// means os.TempDir()) and records it. The caller holds dataDir's lock.
func Open(dataDir, parent string, log *slog.Logger) (*Root, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	record := filepath.Join(dataDir, RecordName)
	Sweep(dataDir, log)
	if parent == "" {
		parent = os.TempDir()
	}
	dir, err := os.MkdirTemp(parent, Prefix)
	if err != nil {
		return nil, fmt.Errorf("agents' temporary directory: %w", err)
	}
	tmp := record + ".new"
	err = os.WriteFile(tmp, []byte(dir+"\n"), 0o600)
	if err == nil {
		err = os.Rename(tmp, record)
	}
	if err != nil {
		_ = os.Remove(tmp)
		_ = os.Remove(dir)
		return nil, fmt.Errorf("record the agents' temporary directory in %s: %w", record, err)
	}
	return &Root{dir: dir, record: record}, nil
}

// Dir is the root's path: agents make their temporary directories in it.
func (r *Root) Dir() string { return r.dir }

// Close removes the root with everything in it, then its record. Agents
// must have ended. A root that cannot be removed stays recorded, so the
// next bridge tries again.
func (r *Root) Close() error {
	if err := os.RemoveAll(r.dir); err != nil {
		return fmt.Errorf("remove the agents' temporary directory %s: %w", r.dir, err)
	}
	if err := os.Remove(r.record); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove %s: %w", r.record, err)
	}
	return nil
}

// Sweep removes the root recorded in dataDir, if it is one (what Open
// does first; a test that killed a bridge for good sweeps after it). The
// record stays until Open replaces it. log may be nil.
func Sweep(dataDir string, log *slog.Logger) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	record := filepath.Join(dataDir, RecordName)
	b, err := os.ReadFile(record)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			log.Warn("agents' temporary directory of an earlier run not read", "record", record, "err", err)
		}
		return
	}
	dir := strings.TrimSpace(string(b))
	if why := notARoot(dir); why != "" {
		log.Warn("agents' temporary directory of an earlier run left alone", "dir", dir, "record", record, "why", why)
		return
	}
	if err := os.RemoveAll(dir); err != nil {
		log.Warn("agents' temporary directory of an earlier run not removed", "dir", dir, "err", err)
		return
	}
	log.Info("removed the agents' temporary directory an earlier run left (it did not stop normally)", "dir", dir)
}

// notARoot says why dir is not a root this user may remove ("" if it is,
// or if it is gone already).
func notARoot(dir string) string {
	if !filepath.IsAbs(dir) || filepath.Clean(dir) != dir {
		return "not a clean absolute path"
	}
	if !strings.HasPrefix(filepath.Base(dir), Prefix) {
		return "not named " + Prefix + "…"
	}
	fi, err := os.Lstat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return ""
	case err != nil:
		return err.Error()
	case !fi.IsDir():
		return "not a directory"
	case !ownedByMe(fi):
		return "owned by another user"
	}
	return ""
}
