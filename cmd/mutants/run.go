package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// skipDirs are top-level directories neither searched for mutants.txt nor copied: installed tools,
// build output and runtime data.
var skipDirs = map[string]bool{".git": true, ".tools": true, "bin": true, "data": true}

// pkgBreak is a break with the package directory (relative to the repository root) its mutants.txt is in.
type pkgBreak struct {
	Break
	Dir string
}

// findBreaks parses every mutants.txt under root, skipping skipDirs at the top level and .git anywhere.
func findBreaks(root string) ([]pkgBreak, error) {
	var out []pkgBreak
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			if d.Name() == ".git" || (filepath.Dir(rel) == "." && skipDirs[rel]) {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Name() != "mutants.txt" {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("read mutants: %w", err)
		}
		bs, err := parseMutants(rel, string(data))
		if err != nil {
			return err
		}
		for _, b := range bs {
			if !filepath.IsLocal(filepath.Join(filepath.Dir(rel), filepath.FromSlash(b.File))) {
				return fmt.Errorf("%s:%d: break %q: file %q is outside the checkout", rel, b.Line, b.Title, b.File)
			}
			out = append(out, pkgBreak{Break: b, Dir: filepath.Dir(rel)})
		}
		return nil
	})
	return out, err
}

// copyCheckout copies the files git knows of (tracked and untracked, not ignored) from root to dst,
// leaving out skipDirs. Files deleted from the work tree but still tracked are skipped.
func copyCheckout(ctx context.Context, root, dst string) error {
	cmd := exec.CommandContext(ctx, "git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	cmd.Dir = root
	list, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("git ls-files: %w", err)
	}
	seen := map[string]bool{}
	for _, rel := range strings.Split(string(list), "\x00") {
		if rel == "" || seen[rel] || skipDirs[strings.SplitN(rel, "/", 2)[0]] {
			continue
		}
		seen[rel] = true
		if err := copyEntry(filepath.Join(root, rel), filepath.Join(dst, rel)); err != nil {
			return err
		}
	}
	return nil
}

// copyEntry copies one regular file or symlink, keeping its mode; a missing source is skipped.
func copyEntry(src, dst string) error {
	fi, err := os.Lstat(src)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("copy: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return fmt.Errorf("copy: %w", err)
	}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		target, err := os.Readlink(src)
		if err != nil {
			return fmt.Errorf("copy: %w", err)
		}
		return os.Symlink(target, dst)
	case fi.Mode().IsRegular():
		in, err := os.Open(src)
		if err != nil {
			return fmt.Errorf("copy: %w", err)
		}
		defer in.Close()
		out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, fi.Mode().Perm())
		if err != nil {
			return fmt.Errorf("copy: %w", err)
		}
		if _, err := io.Copy(out, in); err != nil {
			out.Close()
			return fmt.Errorf("copy %s: %w", src, err)
		}
		return out.Close()
	}
	return nil // directories (submodules) and other kinds are not copied
}

// Outcome of one break.
type Outcome string

const (
	Killed   Outcome = "KILLED"   // a test failed with the break applied
	Survived Outcome = "SURVIVED" // the tests passed with the break applied
	NotFound Outcome = "NOTFOUND" // the original text does not occur exactly once
	Broken   Outcome = "BROKEN"   // the break does not build, or the file cannot be read or written
)

// runBreak applies b in the copy at dir, runs the package's matching tests, and restores the file. It
// returns the outcome and the go test output (or the reason) for reporting.
func runBreak(ctx context.Context, dir string, b pkgBreak, timeout time.Duration) (Outcome, string) {
	path := filepath.Join(dir, b.Dir, filepath.FromSlash(b.File))
	orig, err := os.ReadFile(path)
	if err != nil {
		return Broken, err.Error()
	}
	if n := bytes.Count(orig, []byte(b.Old)); n != 1 {
		return NotFound, fmt.Sprintf("original text found %d times in %s", n, filepath.Join(b.Dir, b.File))
	}
	mutated := bytes.Replace(orig, []byte(b.Old), []byte(b.New), 1)
	if err := os.WriteFile(path, mutated, 0o644); err != nil {
		return Broken, err.Error()
	}
	defer os.WriteFile(path, orig, 0o644) //nolint:errcheck // a failed restore shows as wrong outcomes below
	cmd := exec.CommandContext(ctx, "go", "test", "-count=1", "-timeout", timeout.String(),
		"-run", b.Test, "./"+filepath.ToSlash(b.Dir))
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	text := string(out)
	if err == nil {
		return Survived, text
	}
	if strings.Contains(text, "[build failed]") || strings.Contains(text, "[setup failed]") {
		return Broken, text
	}
	return Killed, text
}
