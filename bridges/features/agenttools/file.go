package agenttools

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/agentbridge/agentbridge/bridges/core/render"
)

// DefaultMaxSendFileBytes caps a file the agent posts with send_file; a
// platform's Limits.MaxUploadBytes may lower it.
const DefaultMaxSendFileBytes = 25 << 20

// maxSnippetBytes caps a text file shown as a snippet on a platform that
// cannot take files.
const maxSnippetBytes = 32 << 10

// errFileRefused is wrapped by readWorkdirFile's refusals (the agent asked
// for something it may not send), as opposed to I/O failures.
var errFileRefused = errors.New("file refused")

// readWorkdirFile reads the regular file at path for send_file. path is
// relative to workdir or absolute inside it, and the file must stay inside
// workdir also once symbolic links are followed (the agent controls the
// workdir and may plant links; like os.Root, a link with an absolute
// target is refused even when it points inside). A file that is, or lies inside, one of
// hidden (the bridge's data_dir, config file, device stores; they may sit
// inside the workdir) is refused, as are files over max bytes, devices,
// pipes and directories. It returns the file name and its content.
func readWorkdirFile(workdir, path string, hidden []string, max int64) (string, []byte, error) {
	rel, err := insideWorkdir(workdir, path)
	if err != nil {
		return "", nil, err
	}
	root, err := os.OpenRoot(workdir)
	if err != nil {
		return "", nil, fmt.Errorf("open the working directory: %w", err)
	}
	defer root.Close()
	// os.Root refuses paths that leave the workdir, through ".." or a
	// symbolic link, at open time; O_NONBLOCK keeps a planted FIFO from
	// blocking the open.
	f, err := root.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", nil, fmt.Errorf("%s: no such file: %w", path, errFileRefused)
		}
		return "", nil, fmt.Errorf("%s: %w (it must be a file inside the working directory): %w", path, unwrapPathError(err), errFileRefused)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", nil, fmt.Errorf("stat %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		return "", nil, fmt.Errorf("%s is not a regular file: %w", path, errFileRefused)
	}
	real := openedPath(f, filepath.Join(workdir, rel))
	for _, h := range hidden {
		if within(real, resolved(h)) {
			return "", nil, fmt.Errorf("%s belongs to the bridge itself and cannot be sent: %w", path, errFileRefused)
		}
	}
	if fi.Size() > max {
		return "", nil, fmt.Errorf("%s is %s, over the %s limit: %w", path, render.ByteSize(fi.Size()), render.ByteSize(max), errFileRefused)
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return "", nil, fmt.Errorf("read %s: %w", path, err)
	}
	if int64(len(data)) > max { // it grew meanwhile
		return "", nil, fmt.Errorf("%s is over the %s limit: %w", path, render.ByteSize(max), errFileRefused)
	}
	return filepath.Base(real), data, nil
}

// insideWorkdir returns path relative to workdir, refusing paths that are
// lexically outside it (absolute elsewhere, or climbing out with "..").
func insideWorkdir(workdir, path string) (string, error) {
	p := strings.TrimSpace(path)
	if p == "" {
		return "", fmt.Errorf("no path given: %w", errFileRefused)
	}
	if filepath.IsAbs(p) {
		r, err := filepath.Rel(workdir, p)
		if err != nil {
			return "", fmt.Errorf("%s is outside the working directory: %w", path, errFileRefused)
		}
		p = r
	}
	p = filepath.Clean(p)
	if p == "." || p == ".." || strings.HasPrefix(p, ".."+string(filepath.Separator)) || filepath.IsAbs(p) {
		return "", fmt.Errorf("%s is outside the working directory: %w", path, errFileRefused)
	}
	return p, nil
}

// openedPath is the real path of the open file f: on Linux what the kernel
// says f is (immune to links swapped after the open), elsewhere fallback
// with its links resolved.
func openedPath(f *os.File, fallback string) string {
	if runtime.GOOS == "linux" {
		if p, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(int(f.Fd()))); err == nil && filepath.IsAbs(p) {
			return p
		}
	}
	return resolved(fallback)
}

// resolved is p with its symbolic links resolved, or p cleaned when that
// fails (it may not exist).
func resolved(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return filepath.Clean(p)
}

// within reports whether p is dir or inside it.
func within(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, string(filepath.Separator))+string(filepath.Separator))
}

// unwrapPathError drops the *PathError wrapper's path (the caller names
// the path itself).
func unwrapPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// MoveTo implements agents.WorkdirMover: send_file works in workdir, a
// worktree's, and stops hiding root (send_file never leaves workdir
// anyway, os.Root, so the rest of data_dir stays out of reach).
func (t *Server) MoveTo(workdir, root string) {
	t.workdir = workdir
	t.hidden = slices.DeleteFunc(slices.Clone(t.hidden), func(h string) bool {
		return within(resolved(root), resolved(h))
	})
}
