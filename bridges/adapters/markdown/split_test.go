package markdown

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/agentbridge/agentbridge/bridges/adapters/markdown/markdowntest"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current output")

// checkSplit verifies the contract of split for one input: chunk sizes,
// lossless re-joining and balanced fences.
func checkSplit(t *testing.T, text string, maxRunes int) []piece {
	t.Helper()
	ps := split(text, maxRunes)
	var joined strings.Builder
	for i, p := range ps {
		chunk := p.prefix + p.body + p.suffix
		if !utf8.ValidString(chunk) {
			t.Fatalf("chunk %d is not valid UTF-8: %q", i, chunk)
		}
		if n := utf8.RuneCountInString(chunk); maxRunes > 0 && n > maxRunes {
			t.Fatalf("chunk %d has %d runes > %d: %q", i, n, maxRunes, chunk)
		}
		if p.body == "" {
			t.Fatalf("chunk %d has an empty body", i)
		}
		joined.WriteString(p.body)
	}
	if want := string([]rune(text)); joined.String() != want {
		t.Fatalf("re-joined chunks differ from the input\n got: %q\nwant: %q", joined.String(), want)
	}
	if maxRunes > 0 && !hasLongFenceLine(text, maxRunes/4) && !hasLongFenceRun(text, maxRunes/4) {
		for i, p := range ps {
			if open := openFenceAtEnd(p.prefix + p.body + p.suffix); open {
				t.Fatalf("chunk %d ends inside a fence: %q", i, p.prefix+p.body+p.suffix)
			}
		}
	}
	// Without fence lines no prefix or suffix takes room, so only a run (with three spaces before it)
	// longer than half a chunk may have to start one; with them the quarter rule of Split's doc applies.
	runLimit := maxRunes / 4
	if !hasLongFenceLine(text, -1) {
		runLimit = maxRunes / 2
	}
	if maxRunes > 0 && !hasLongFenceLine(text, maxRunes/4) && !hasLongFenceRun(text, runLimit) {
		checkNoNewFenceStart(t, text, ps)
	}
	return ps
}

// checkNoNewFenceStart fails if a chunk's body, with leading whitespace trimmed as callers do, starts
// with a run of three or more '`' or '~' that was not at the start of a line (after at most three
// spaces) in text: such a chunk would open a code block the input does not have.
func checkNoNewFenceStart(t *testing.T, text string, ps []piece) {
	t.Helper()
	r := []rune(text)
	pos := 0 // rune offset of the current body in text
	for i, p := range ps {
		body := []rune(p.body)
		lead := 0
		for lead < len(body) && unicode.IsSpace(body[lead]) {
			lead++
		}
		start := pos + lead
		pos += len(body)
		if start+3 > len(r) || (r[start] != '`' && r[start] != '~') || r[start+1] != r[start] || r[start+2] != r[start] {
			continue
		}
		k := start - 1
		for k >= 0 && r[k] == ' ' {
			k--
		}
		if (k < 0 || r[k] == '\n') && start-(k+1) <= 3 {
			continue // a fence-like line in the input too
		}
		t.Fatalf("chunk %d, trimmed, starts with a fence run that is not at a line start in the input: %q",
			i, p.prefix+p.body+p.suffix)
	}
}

// hasLongFenceLine reports whether text has a fence-like line longer than
// limit runes (Split documents that such fences are split as plain text).
func hasLongFenceLine(text string, limit int) bool {
	for line := range strings.SplitSeq(text, "\n") {
		r := []rune(line)
		if _, _, _, ok := fenceMarker(r); ok && len(r) > limit {
			return true
		}
	}
	return false
}

// hasLongFenceRun reports whether text has a run of three or more '`' or
// '~' that, with three spaces before it, is longer than limit runes: a
// chunk cannot always avoid starting inside such a run (Split documents it).
func hasLongFenceRun(text string, limit int) bool {
	r := []rune(text)
	for i := 0; i < len(r); {
		if r[i] != '`' && r[i] != '~' {
			i++
			continue
		}
		j := i
		for j < len(r) && r[j] == r[i] {
			j++
		}
		if j-i >= 3 && j-i+3 > limit {
			return true
		}
		i = j
	}
	return false
}

// openFenceAtEnd parses chunk on its own and reports whether a fenced block
// is still open at its end.
func openFenceAtEnd(chunk string) bool {
	open := false
	var ch rune
	var run int
	for line := range strings.SplitSeq(chunk, "\n") {
		r := []rune(line)
		if open {
			if isCloser(r, ch, run) {
				open = false
			}
			continue
		}
		if _, c, n, ok := isOpener(r); ok {
			open, ch, run = true, c, n
		}
	}
	return open
}

func TestSplitGolden(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.md"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata: %v", err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".md")
		t.Run(name, func(t *testing.T) {
			limit, err := strconv.Atoi(filepath.Ext(name)[1:])
			if err != nil {
				t.Fatalf("file name %s must end in .<limit>.md", f)
			}
			in, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			checkSplit(t, string(in), limit)
			var got strings.Builder
			for i, c := range Split(string(in), limit) {
				fmt.Fprintf(&got, "----- chunk %d (%d runes) -----\n%s\n", i+1, utf8.RuneCountInString(c), c)
			}
			markdowntest.Golden(t, f, got.String(), *update)
		})
	}
}

func TestSplitProperties(t *testing.T) {
	tests := []struct {
		name    string
		text    string
		max     int
		whole   []string // substrings that must appear whole in exactly one chunk
		want    []string // exact chunks, if set
		chunks  int      // expected number of chunks, if > 0
		reopens string   // a line every continuation chunk must start with
	}{
		{name: "fits", text: "hello world", max: 20, want: []string{"hello world"}},
		{name: "empty", text: "", max: 20, want: []string{}},
		{name: "no limit", text: strings.Repeat("x", 5000), max: 0, chunks: 1},
		{name: "paragraph first", text: "aaaa bbbb\n\ncccc dddd", max: 15,
			want: []string{"aaaa bbbb\n\n", "cccc dddd"}},
		{name: "line before word", text: "aaaa bbbb\ncccc dddd", max: 15,
			want: []string{"aaaa bbbb\n", "cccc dddd"}},
		{name: "word", text: "aaaa bbbb cccc dddd", max: 12,
			want: []string{"aaaa bbbb ", "cccc dddd"}},
		{name: "runes never split", text: strings.Repeat("😀", 25), max: 10, chunks: 3},
		{name: "link kept whole", text: "see [the docs](https://example.com/x/y/z) now please",
			max: 45, whole: []string{"[the docs](https://example.com/x/y/z)"}},
		{name: "inline code kept whole", text: "run `go test ./... -run X` then wait",
			max: 30, whole: []string{"`go test ./... -run X`"}},
		{name: "bare url kept whole", text: "open https://example.com/abc/def/ghi and go",
			max: 40, whole: []string{"https://example.com/abc/def/ghi"}},
		{name: "fence reopened with language",
			text: "```python\n" + strings.Repeat("print('x')\n", 20) + "```\n", max: 60,
			reopens: "```python\n"},
		{name: "unclosed fence closed", text: "```\nabc\n", max: 50, want: []string{"```\nabc\n```"}},
		{name: "long line in fence",
			text: "```\n" + strings.Repeat("word ", 40) + "\n```", max: 50, reopens: "```\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkSplit(t, tt.text, tt.max)
			got := Split(tt.text, tt.max)
			if tt.want != nil {
				if len(got) != len(tt.want) {
					t.Fatalf("got %d chunks %q, want %q", len(got), got, tt.want)
				}
				for i := range got {
					if got[i] != tt.want[i] {
						t.Fatalf("chunk %d = %q, want %q", i, got[i], tt.want[i])
					}
				}
			}
			if tt.chunks > 0 && len(got) != tt.chunks {
				t.Fatalf("got %d chunks, want %d: %q", len(got), tt.chunks, got)
			}
			for _, w := range tt.whole {
				n := 0
				for _, c := range got {
					n += strings.Count(c, w)
				}
				if n != 1 {
					t.Fatalf("%q appears whole %d times in %q", w, n, got)
				}
			}
			if tt.reopens != "" {
				if len(got) < 2 {
					t.Fatalf("expected several chunks, got %q", got)
				}
				for i, c := range got {
					if !strings.HasPrefix(c, tt.reopens) {
						t.Fatalf("chunk %d does not start with %q: %q", i, tt.reopens, c)
					}
				}
			}
		})
	}
}

func FuzzSplit(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join("testdata", "*.md"))
	for _, s := range seeds {
		b, err := os.ReadFile(s)
		if err == nil {
			f.Add(string(b), 40)
		}
	}
	f.Add("```go\nx\n```\n\n[a](b) `c` https://d.e", 12)
	f.Add("~~~~\n```\n~~~~\n", 16)
	f.Add("a\n\n\n\nb", 3)
	f.Add("\xff\xfe bad utf8", 5)
	f.Add("xxxxxxxx ```yyyy zzzz", 12) // a cut before the run would make it a fence
	f.Fuzz(func(t *testing.T, text string, maxRunes int) {
		if maxRunes < 1 || maxRunes > 5000 || len(text) > 20000 {
			t.Skip()
		}
		checkSplit(t, text, maxRunes)
	})
}
