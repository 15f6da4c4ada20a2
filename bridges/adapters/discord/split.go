package discord

import (
	"strings"
	"unicode/utf8"

	"github.com/agentbridge/agentbridge/bridges/adapters/markdown"
)

// The core splits text to Limits.MaxMessageRunes before conversion; these
// functions are the safety net for the rare converted text that grew past
// Discord's hard limit (a wide table, say).

// splitMessage cuts text into chunks of at most limit characters (runes)
// with markdown.Split: paragraph, line, then word boundaries, code fences
// closed and reopened. Chunks are trimmed; blank ones are dropped.
func splitMessage(text string, limit int) []string {
	if utf8.RuneCountInString(text) <= limit {
		return []string{text}
	}
	var out []string
	for _, p := range markdown.Split(text, limit) {
		p = strings.TrimLeft(strings.TrimRight(p, " \t\n"), "\n")
		if strings.TrimSpace(p) != "" {
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		return []string{""}
	}
	return out
}

// truncateMessage cuts text to at most limit characters at a safe
// boundary (closing an open code fence) and marks the cut with "…".
func truncateMessage(text string, limit int) string {
	if utf8.RuneCountInString(text) <= limit {
		return text
	}
	return splitMessage(text, limit-2)[0] + "\n…"
}
