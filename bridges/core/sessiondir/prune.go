// Package sessiondir is where each agent session keeps its private state:
// data_dir/sessions/<session id> (the CLI's configuration and transcript,
// the files people send), which the sandbox hides from every other agent;
// and the pruning of the directories no conversation uses any more.
package sessiondir

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"time"
)

// Dir is the directory under data_dir that holds each agent session's
// private state (data_dir/sessions/<session id>).
const Dir = "sessions"

// Uploads is the directory, inside a session's private state
// (data_dir/sessions/<id>), where the files people send are saved for the
// agent (bridges/features/uploads); the sandbox lets the agent see it at
// the same path.
const Uploads = "uploads"

// UploadsDir is the absolute path of the uploads of session sessionID
// under dataDir, "" when the bridge keeps no session state (no data_dir)
// or there is no session yet.
func UploadsDir(dataDir, sessionID string) string {
	if dataDir == "" || sessionID == "" {
		return ""
	}
	dir, err := filepath.Abs(filepath.Join(dataDir, Dir, sessionID, Uploads))
	if err != nil {
		return ""
	}
	return dir
}

// Store lists the session ids conversations use (*store.Store does).
type Store interface {
	SessionIDs(ctx context.Context) (map[string]bool, error)
}

// Prune removes the private state directories of agent
// sessions (data_dir/sessions/<id>, see Dir) that no conversation
// uses any more — left behind by !new, a fresh start after a failed resume,
// or a pruned conversation — and that nothing was written to since before.
// A session a conversation still uses is never removed, however old: it is
// what the next spawn resumes. It returns how many directories it removed.
func Prune(ctx context.Context, st Store, dataDir string, before time.Time, logger *slog.Logger) (int, error) {
	root := filepath.Join(dataDir, Dir)
	ents, err := os.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("prune session states: %w", err)
	}
	inUse, err := st.SessionIDs(ctx)
	if err != nil {
		return 0, fmt.Errorf("prune session states: %w", err)
	}
	removed := 0
	for _, e := range ents {
		if ctx.Err() != nil {
			return removed, ctx.Err()
		}
		if !e.IsDir() || inUse[e.Name()] {
			continue
		}
		dir := filepath.Join(root, e.Name())
		if newestChange(dir).After(before) {
			continue
		}
		if err := os.RemoveAll(dir); err != nil {
			return removed, fmt.Errorf("prune session state %s: %w", e.Name(), err)
		}
		removed++
		logger.Debug("session state removed", "session", e.Name())
	}
	if removed > 0 {
		logger.Info("pruned unused agent session state", "sessions", removed, "before", before)
	}
	return removed, nil
}

// newestChange is the latest modification time of dir or anything in it
// (the zero time if it cannot be read: such a directory counts as old).
func newestChange(dir string) time.Time {
	var newest time.Time
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // unreadable parts do not keep the directory
		}
		if info, err := d.Info(); err == nil && info.ModTime().After(newest) {
			newest = info.ModTime()
		}
		return nil
	})
	return newest
}
