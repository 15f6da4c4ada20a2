package policy

import (
	"bytes"
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/agentbridge/agentbridge/internal/testkit"
)

// bashSandbox runs command lines under the real Bash inside bubblewrap,
// where every program Bash could start is bashshim (testdata/bashshim):
// the directories of PATH and the system's program directories hold a
// shim under the name of every program of the host, but for bash and sh,
// which are the real Bash, and nothing else is executable (but Bash's
// loader). A run has no network, a
// fresh empty directory as its working directory and HOME, and a fresh
// /tmp; everything else is read-only. It reports the programs started
// and the files left in the working directory and /tmp.
type bashSandbox struct {
	dir   string   // holds shims/, the shim binary's directory, and the runs
	bash  string   // the host's bash
	binds []string // bwrap arguments binding Bash and its libraries
}

// envPayload is the value of the lower-case variables in the sandbox's
// environment: Bash runs the program envpayload if it ever evaluates one
// of them as arithmetic.
const envPayload = "a[$(envpayload)]"

// envPayloadVars are the variables given envPayload.
var envPayloadVars = []string{"x", "y", "z", "i", "j", "n", "v", "f"}

// shimDirs are where the sandbox has a shim for every program.
var shimDirs = []string{"/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"}

// needBashSandbox returns a sandbox, or skips without bwrap or bash or
// the go command (to build the shim), except under CI where that is
// a failure.
func needBashSandbox(t testing.TB) *bashSandbox {
	t.Helper()
	s, err := newBashSandbox(t.TempDir())
	if err != nil {
		testkit.SkipOrFail(t, "bash sandbox: %v", err)
	}
	return s
}

func newBashSandbox(dir string) (*bashSandbox, error) {
	if _, err := exec.LookPath("bwrap"); err != nil {
		return nil, err
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		return nil, err
	}
	if bash, err = filepath.EvalSymlinks(bash); err != nil {
		return nil, err
	}
	s := &bashSandbox{dir: dir, bash: bash}
	if err := s.buildShims(); err != nil {
		return nil, err
	}
	libs, err := elfDeps(bash)
	if err != nil {
		return nil, fmt.Errorf("libraries of %s: %w", bash, err)
	}
	s.binds = []string{"--ro-bind", bash, "/.bashdiff/bash"}
	for inSandbox, onHost := range libs {
		s.binds = append(s.binds, "--ro-bind", onHost, inSandbox)
	}
	return s, nil
}

// buildShims builds the shim and links it under the name of every
// program in the host's program directories.
func (s *bashSandbox) buildShims() error {
	goTool, err := exec.LookPath("go")
	if err != nil {
		goTool = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	shims := filepath.Join(s.dir, "shims")
	if err := os.MkdirAll(shims, 0o755); err != nil {
		return err
	}
	bin := filepath.Join(s.dir, "shim")
	build := exec.Command(goTool, "build", "-o", bin, "./testdata/bashshim")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("build the shim: %w\n%s", err, out)
	}
	names := map[string]bool{"envpayload": true}
	for _, d := range shimDirs {
		entries, _ := os.ReadDir(d)
		for _, e := range entries {
			names[e.Name()] = true
		}
	}
	for n := range names {
		if err := os.Link(bin, filepath.Join(shims, n)); err != nil {
			return fmt.Errorf("link the shim: %w", err)
		}
	}
	return nil
}

// elfDeps returns the loader and the libraries an ELF program needs, by
// their path in the sandbox (as the loader looks them up) and on the host.
func elfDeps(prog string) (map[string]string, error) {
	f, err := elf.Open(prog)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]string{}
	for _, p := range f.Progs {
		if p.Type != elf.PT_INTERP {
			continue
		}
		b := make([]byte, p.Filesz)
		if _, err := p.ReadAt(b, 0); err != nil {
			return nil, err
		}
		interp := string(bytes.TrimRight(b, "\x00"))
		real, err := filepath.EvalSymlinks(interp)
		if err != nil {
			return nil, err
		}
		out[interp] = real
	}
	libs, err := f.ImportedLibraries()
	if err != nil {
		return nil, err
	}
	dirs := []string{"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib/aarch64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/lib64", "/usr/lib64", "/lib", "/usr/lib"}
	for _, lib := range libs {
		found := false
		for _, d := range dirs {
			p := filepath.Join(d, lib)
			if real, err := filepath.EvalSymlinks(p); err == nil {
				out[p] = real
				found = true
				break
			}
		}
		if !found {
			return nil, fmt.Errorf("library %s not found", lib)
		}
	}
	return out, nil
}

// bashRun is what one command line did in the sandbox.
type bashRun struct {
	execs   [][]string // each program started: its path, then its argv
	changed []string   // files and directories left in the working directory and /tmp
	timeout bool       // the run was stopped after the time limit
}

// run runs command with bash -c in a fresh sandbox, for at most limit.
func (s *bashSandbox) run(command string, limit time.Duration) (bashRun, error) {
	var r bashRun
	runDir, err := os.MkdirTemp(s.dir, "run")
	if err != nil {
		return r, err
	}
	defer os.RemoveAll(runDir)
	work, tmp, logDir := filepath.Join(runDir, "w"), filepath.Join(runDir, "tmp"), filepath.Join(runDir, "log")
	for _, d := range []string{work, tmp, logDir} {
		if err := os.Mkdir(d, 0o777); err != nil {
			return r, err
		}
	}
	args := []string{"--unshare-all", "--die-with-parent", "--new-session", "--clearenv",
		"--setenv", "PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		"--setenv", "HOME", "/w", "--proc", "/proc", "--dev", "/dev"}
	for _, v := range envPayloadVars {
		args = append(args, "--setenv", v, envPayload)
	}
	args = append(args, s.binds...)
	for _, d := range shimDirs {
		args = append(args, "--ro-bind", filepath.Join(s.dir, "shims"), d)
	}
	for _, d := range shimDirs { // shells are the real Bash: what they run is seen too
		for _, sh := range []string{"bash", "sh"} {
			args = append(args, "--ro-bind", s.bash, path.Join(d, sh))
		}
	}
	args = append(args, "--bind", work, "/w", "--bind", tmp, "/tmp", "--bind", logDir, "/.bashdiff/log",
		"--chdir", "/w", "/.bashdiff/bash", "-c", command)
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bwrap", args...)
	cmd.WaitDelay = time.Second
	var stderr bytes.Buffer
	cmd.Stderr = &limitedBuffer{buf: &stderr, max: 4096}
	err = cmd.Run()
	r.timeout = ctx.Err() != nil
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) && !r.timeout {
		return r, fmt.Errorf("bwrap: %w", err)
	}
	if strings.Contains(stderr.String(), "bwrap:") {
		return r, fmt.Errorf("bwrap failed: %s", stderr.String())
	}
	if r.execs, err = readExecs(filepath.Join(logDir, "execs")); err != nil {
		return r, err
	}
	for _, d := range []string{work, tmp} {
		_ = filepath.WalkDir(d, func(p string, _ fs.DirEntry, err error) error {
			if p != d {
				r.changed = append(r.changed, p[len(runDir):])
			}
			return nil
		})
	}
	return r, nil
}

// readExecs reads the records of the shims (at most 1 MiB of them).
func readExecs(file string) ([][]string, error) {
	f, err := os.Open(file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := make([]byte, 1<<20)
	n, _ := f.Read(b)
	var out [][]string
	for _, rec := range strings.Split(string(b[:n]), "\x00\n") {
		if rec == "" {
			continue
		}
		out = append(out, strings.Split(rec, "\x00"))
	}
	return out, nil
}

// limitedBuffer keeps the first max bytes written to it.
type limitedBuffer struct {
	buf *bytes.Buffer
	max int
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := l.max - l.buf.Len(); room > 0 {
		l.buf.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

// execCommand is an observed program start written as a literal command
// line: the program's base name, then its arguments, each single-quoted.
// As a Bash rule's match it is the narrowest rule for that start. A word
// that is not UTF-8 (which a pattern cannot hold) is the glob *.
func execCommand(rec []string) string {
	words := []string{path.Base(rec[0])}
	if len(rec) > 2 {
		words = append(words, rec[2:]...)
	}
	for i, w := range words {
		if !utf8.ValidString(w) {
			words[i] = "*"
			continue
		}
		words[i] = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
	}
	return strings.Join(words, " ")
}
