package discord

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentbridge/agentbridge/bridges/adapters/markdown/markdowntest"
	"github.com/agentbridge/agentbridge/internal/textcut"
)

// longFence reports whether text has a fence-like line, or a run of three
// or more '`' / '~', longer than limit runes.
func longFence(text string, limit int) bool {
	for line := range strings.SplitSeq(text, "\n") {
		t := strings.TrimLeft(line, " ")
		if (strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~")) && utf8.RuneCountInString(line) > limit {
			return true
		}
	}
	for _, c := range []string{"`", "~"} {
		if strings.Contains(text, strings.Repeat(c, max(3, limit-3))) {
			return true
		}
	}
	return false
}

// FuzzSplitMessage converts arbitrary Markdown and splits it like Post:
// every chunk fits the limit, is not blank, closes every code block it
// opens, and no text is lost (markdowntest.Check).
func FuzzSplitMessage(f *testing.F) {
	f.Add("para one\n\n```go\n"+strings.Repeat("x := 1\n", 40)+"```\n\nafter", 60)
	f.Add("| a | b |\n|---|---|\n| 1 | 2 |\n\n~~~\ncode\n~~~", 40)
	f.Add(strings.Repeat("word ", 300), 100)
	f.Fuzz(func(t *testing.T, md string, limit int) {
		if limit < 40 || limit > 4000 || len(md) > 20000 || !utf8.ValidString(md) {
			t.Skip()
		}
		text := toDiscord(md)
		if longFence(text, limit/4) {
			// Fence lines longer than a quarter chunk are split as text
			// (markdown.Split documents it).
			t.Skip()
		}
		markdowntest.Check(t, markdowntest.CommonMark, text, splitMessage(text, limit), limit)
	})
}

func TestSplitMessage(t *testing.T) {
	t.Parallel()
	code := "```go\n" + strings.Repeat("fmt.Println(\"hello, world\")\n", 150) + "```"
	tests := []struct {
		name string
		text string
	}{
		{"short", "hello"},
		{"paragraphs", strings.Repeat(strings.Repeat("word ", 150)+"\n\n", 6)},
		{"code block", "Look:\n\n" + code + "\n\nDone."},
		{"one long word", strings.Repeat("é", 4500)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			parts := splitMessage(tc.text, maxContentRunes)
			if len(parts) == 0 {
				t.Fatal("no parts")
			}
			total := 0
			for _, p := range parts {
				n := utf8.RuneCountInString(p)
				if n > maxContentRunes || n == 0 {
					t.Errorf("part of %d characters", n)
				}
				if strings.Count(p, "```")%2 != 0 {
					t.Errorf("unbalanced fence in part starting %q", p[:20])
				}
				if !utf8.ValidString(p) {
					t.Error("part cuts a rune")
				}
				total += strings.Count(p, "hello, world")
			}
			if want := strings.Count(tc.text, "hello, world"); total != want {
				t.Errorf("code lines across parts = %d, want %d", total, want)
			}
			if utf8.RuneCountInString(tc.text) <= maxContentRunes && (len(parts) != 1 || parts[0] != tc.text) {
				t.Errorf("short text changed: %q", parts)
			}
		})
	}
	if got := truncateMessage(code, 500); utf8.RuneCountInString(got) > 500 || !strings.HasSuffix(got, "```\n…") {
		t.Errorf("truncateMessage = %d runes, ends %q", utf8.RuneCountInString(got), got[len(got)-8:])
	}
	if got := textcut.Truncate("Approve the deployment", 10); got != "Approve t…" {
		t.Errorf("truncateRunes = %q", got)
	}
}
