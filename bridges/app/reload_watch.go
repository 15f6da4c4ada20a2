package app

import (
	"context"
	"crypto/sha256"
	"errors"
	"os"
	"time"
)

// filePoll is how often the config file is looked at. The watcher polls
// (stat each time, read and hash only when the modification time or size
// moved) rather than using inotify: no dependency, and it sees every way
// a file is replaced — editors that write a new file and rename it,
// Kubernetes ConfigMap symlink swaps, network filesystems where inotify
// is silent. A touch without a change reloads nothing (the hash decides).
const filePoll = time.Second

// fileStamp is what the watcher last saw of the file.
type fileStamp struct {
	mod  time.Time
	size int64
	sum  [32]byte
	ok   bool // the file could be read
}

// stampOf stats path and, when its time or size differ from prev, reads
// and hashes it.
func stampOf(path string, prev fileStamp) fileStamp {
	fi, err := os.Stat(path)
	if err != nil {
		return fileStamp{}
	}
	if prev.ok && fi.ModTime().Equal(prev.mod) && fi.Size() == prev.size {
		return prev
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return fileStamp{}
	}
	return fileStamp{mod: fi.ModTime(), size: fi.Size(), sum: sha256.Sum256(data), ok: true}
}

// watch runs until ctx ends: it reloads on the signals of sigs (with
// force on r.force) and when
// the config file's content changes. A change is debounced: it is applied
// once two looks filePoll apart see the same content (an editor's save
// in several writes reloads once). A refused file is not retried until
// its content changes again.
func (r *reloader) watch(ctx context.Context, sigs <-chan os.Signal, poll time.Duration) {
	applied := stampOf(r.path, fileStamp{}) // the content in force
	seen := applied
	tick := time.NewTicker(poll)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case s := <-sigs:
			trigger, force := triggerSignal, false
			if s == r.force {
				trigger, force = triggerForce, true
			}
			applied = stampOf(r.path, fileStamp{})
			seen = applied
			r.logResult(r.reload(ctx, trigger, force))
		case <-tick.C:
			cur := stampOf(r.path, seen)
			switch {
			case !cur.ok || cur.sum == applied.sum:
				seen = cur
			case cur.sum == seen.sum: // unchanged since the last look: the edit is complete
				applied = cur
				r.logResult(r.reload(ctx, triggerFile, false))
			default:
				seen = cur
			}
		}
	}
}

// logResult logs what a reload's error leaves to say (refusals are logged
// by refuse itself).
func (r *reloader) logResult(err error) {
	if err != nil && !errors.Is(err, errUnchanged) {
		r.log.Debug("config reload", "result", err)
	}
}
