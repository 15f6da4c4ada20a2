package main

import (
	"fmt"
	"path"
	"strings"
)

// Break is one single-point change of a mutants.txt file: in File (a path relative to the directory of
// the mutants.txt: usually a file of that package, or a file of another package that the package's tests
// exercise, e.g. ../sqldb/dialect.go), Old is replaced by New, and the package's tests matching Test must
// then fail.
type Break struct {
	Title string // the "## " line without its marker
	File  string // slash path relative to the package directory: a file of the package, or of another one its tests cover
	Test  string // regexp for go test -run
	Old   string // exact original text; must occur exactly once in File
	New   string // replacement text (may be empty)
	Line  int    // line of the "## " header in mutants.txt, for messages
}

// parseMutants reads the blocks of one mutants.txt (name is used in errors only). The format:
//
//	## <what the break does>
//	file: <slash path relative to this directory, inside the checkout>
//	test: <regexp for go test -run>
//	<<<
//	original text, one or more lines
//	===
//	replacement text, zero or more lines
//	>>>
//
// Outside blocks, blank lines and lines starting with "#" (but not "## ") are comments. Any other line,
// a block without file, test or original text, or a block not closed is an error.
func parseMutants(name, text string) ([]Break, error) {
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	var out []Break
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		switch {
		case strings.HasPrefix(line, "## "):
			b, next, err := parseBlock(lines, i)
			if err != nil {
				return nil, fmt.Errorf("%s:%d: %w", name, i+1, err)
			}
			out = append(out, b)
			i = next
		case strings.TrimSpace(line) == "", strings.HasPrefix(line, "#"):
			// comment
		default:
			return nil, fmt.Errorf("%s:%d: unexpected line outside a block: %q", name, i+1, line)
		}
	}
	return out, nil
}

// parseBlock parses the block whose "## " header is lines[start]; it returns the break and the index of
// the block's closing ">>>" line.
func parseBlock(lines []string, start int) (Break, int, error) {
	b := Break{Title: strings.TrimSpace(strings.TrimPrefix(lines[start], "## ")), Line: start + 1}
	if b.Title == "" {
		return b, 0, fmt.Errorf("empty title")
	}
	i := start + 1
	for ; i < len(lines) && lines[i] != "<<<"; i++ {
		key, val, ok := strings.Cut(lines[i], ":")
		val = strings.TrimSpace(val)
		switch {
		case ok && key == "file" && b.File == "":
			b.File = val
		case ok && key == "test" && b.Test == "":
			b.Test = val
		default:
			return b, 0, fmt.Errorf("break %q: want file:, test: or <<<, got %q", b.Title, lines[i])
		}
	}
	if b.File == "" || b.Test == "" {
		return b, 0, fmt.Errorf("break %q: needs file: and test:", b.Title)
	}
	if path.IsAbs(b.File) || path.Clean(b.File) != b.File || path.Base(b.File) == ".." || b.File == "." {
		return b, 0, fmt.Errorf("break %q: file %q is not a clean path relative to this directory", b.Title, b.File)
	}
	if i == len(lines) {
		return b, 0, fmt.Errorf("break %q: no <<<", b.Title)
	}
	var old, repl []string
	sep := -1
	for i++; i < len(lines); i++ {
		switch {
		case lines[i] == "===" && sep < 0:
			sep = i
		case lines[i] == ">>>" && sep >= 0:
			if len(old) == 0 {
				return b, 0, fmt.Errorf("break %q: empty original text", b.Title)
			}
			b.Old, b.New = strings.Join(old, "\n"), strings.Join(repl, "\n")
			return b, i, nil
		case strings.HasPrefix(lines[i], "## ") && i+1 < len(lines) && strings.HasPrefix(lines[i+1], "file:"):
			// The next block's header: this one lacks its >>> (its text would swallow the next break).
			return b, 0, fmt.Errorf("break %q: not closed before the next break at line %d (want === then >>>)", b.Title, i+1)
		case sep < 0:
			old = append(old, lines[i])
		default:
			repl = append(repl, lines[i])
		}
	}
	return b, 0, fmt.Errorf("break %q: not closed (want === then >>>)", b.Title)
}
