// Package markdowntest checks the contract of the chat adapters' message
// splitters, in their tests and fuzz targets: every chunk fits the limit,
// is valid UTF-8 and not blank, closes every code block it opens, and the
// chunks together keep all of the text. Its fence parsers are written
// apart from the splitters' own, so that a splitter is not checked against
// itself. Golden compares a renderer's or splitter's output with its
// golden file.
package markdowntest

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// Fences is how a chat format delimits code blocks.
type Fences int

const (
	// Backticks: a line that starts with ``` (after spaces) opens a block
	// and the next such line closes it, whatever follows the backticks
	// (Slack mrkdwn and WhatsApp, as the renderers write them).
	Backticks Fences = iota
	// CommonMark: fences of three or more ` or ~ indented at most three
	// spaces; a block is closed by a fence of the same character, at
	// least as long, with nothing after it; a backtick opener's info
	// string has no backtick (Discord).
	CommonMark
)

// OpenAtEnd reports whether a code block is still open at the end of s,
// read from its start outside any block.
func (f Fences) OpenAtEnd(s string) bool {
	var ch rune
	run := 0 // length of the open fence, 0 outside a block
	for line := range strings.SplitSeq(s, "\n") {
		if f == Backticks {
			if strings.HasPrefix(strings.TrimLeft(line, " "), "```") {
				run = 3 - run // toggle
			}
			continue
		}
		c, n, rest, ok := fenceLine(line)
		switch {
		case !ok:
		case run == 0 && !(c == '`' && strings.ContainsRune(rest, '`')):
			ch, run = c, n
		case run > 0 && c == ch && n >= run && strings.TrimSpace(rest) == "":
			run = 0
		}
	}
	return run > 0
}

// isFenceLine reports whether line looks like a fence, opening or closing.
func (f Fences) isFenceLine(line string) bool {
	if f == Backticks {
		return strings.HasPrefix(strings.TrimLeft(line, " "), "```")
	}
	_, _, _, ok := fenceLine(line)
	return ok
}

// fenceLine splits a line that starts, after at most three spaces, with a
// run of three or more ` or ~ into the character, the run length and the
// rest of the line.
func fenceLine(line string) (ch rune, run int, rest string, ok bool) {
	t := strings.TrimLeft(line, " ")
	if len(line)-len(t) > 3 || t == "" || (t[0] != '`' && t[0] != '~') {
		return 0, 0, "", false
	}
	rest = strings.TrimLeft(t, t[:1])
	run = len(t) - len(rest)
	return rune(t[0]), run, rest, run >= 3
}

// Check asserts the splitter contract on chunks, the result of splitting
// text at limit runes:
//
//   - every chunk has at most limit runes and is not blank (text that is
//     blank itself may come back as its only chunk);
//   - every chunk is valid UTF-8 when text is;
//   - every chunk, read on its own, ends outside a code block when text
//     does (a cut inside a block closes it and the next chunk reopens it);
//   - text is kept: the chunks joined, without fence lines and white
//     space, read the same as text without them, and text that is not
//     blank gives at least one chunk.
func Check(tb testing.TB, f Fences, text string, chunks []string, limit int) {
	tb.Helper()
	balanced := !f.OpenAtEnd(text)
	for i, c := range chunks {
		if n := utf8.RuneCountInString(c); n > limit {
			tb.Fatalf("chunk %d has %d runes > %d: %q", i, n, limit, c)
		}
		if strings.TrimSpace(c) == "" && !(len(chunks) == 1 && c == text) {
			tb.Fatalf("chunk %d is blank: %q", i, c)
		}
		if utf8.ValidString(text) && !utf8.ValidString(c) {
			tb.Fatalf("chunk %d is not valid UTF-8: %q", i, c)
		}
		if balanced && f.OpenAtEnd(c) {
			tb.Fatalf("chunk %d ends inside a code block: %q\n(from %q)", i, c, text)
		}
	}
	if strings.TrimSpace(text) != "" && len(chunks) == 0 {
		tb.Fatalf("no chunks for %q", text)
	}
	if got, want := f.content(strings.Join(chunks, "\n")), f.content(text); got != want {
		tb.Fatalf("chunks lost or changed text:\n got %q\nwant %q\nchunks %q", got, want, chunks)
	}
}

// content is s without its fence lines and white space: what a cut (which
// may add fence lines and drop white space) must not change.
func (f Fences) content(s string) string {
	var b strings.Builder
	for line := range strings.SplitSeq(s, "\n") {
		if f.isFenceLine(line) {
			continue
		}
		for _, c := range line {
			if !unicode.IsSpace(c) {
				b.WriteRune(c)
			}
		}
	}
	return b.String()
}
