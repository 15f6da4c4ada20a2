package discord

import (
	"strings"
	"unicode/utf8"
)

// The core splits text to Limits.MaxMessageRunes before conversion; these
// functions are the safety net for the rare converted text that grew past
// Discord's hard limit (a wide table, say).

// fenceReserve is the room kept in a chunk for closing an open code fence.
const fenceReserve = 8

// splitMessage cuts text into chunks of at most limit characters (runes),
// preferring paragraph, then line, then word boundaries. A chunk that ends
// inside a fenced code block closes the fence, and the next chunk reopens
// it with the same info string.
func splitMessage(text string, limit int) []string {
	if utf8.RuneCountInString(text) <= limit {
		return []string{text}
	}
	var parts []string
	prefix := "" // fence opener carried over from the previous chunk
	rest := text
	for rest != "" {
		budget := limit - utf8.RuneCountInString(prefix)
		if utf8.RuneCountInString(rest) <= budget {
			parts = append(parts, prefix+rest)
			break
		}
		budget -= fenceReserve
		if budget < 1 { // absurdly small limit: give up on fences
			budget, prefix = limit, ""
		}
		cut, skip := cutPoint(rest, byteIndexOfRune(rest, budget))
		chunk := prefix + rest[:cut]
		rest = rest[cut+skip:]
		opener, marker := openFenceAtEnd(chunk)
		if marker != "" {
			chunk += "\n" + marker
			prefix = opener + "\n"
		} else {
			prefix = ""
		}
		parts = append(parts, chunk)
	}
	return parts
}

// cutPoint chooses where to cut s so that s[:cut] fits in max bytes (max
// is on a rune boundary); skip is the separator's length to drop.
func cutPoint(s string, max int) (cut, skip int) {
	window := s[:max]
	if i := strings.LastIndex(window, "\n\n"); i > 0 && i >= max/2 {
		return i, 2
	}
	if i := strings.LastIndex(window, "\n"); i > 0 && i >= max/4 {
		return i, 1
	}
	if i := strings.LastIndex(window, " "); i > 0 && i >= max/4 {
		return i, 1
	}
	if i := strings.LastIndex(window, "\n"); i > 0 {
		return i, 1
	}
	if i := strings.LastIndex(window, " "); i > 0 {
		return i, 1
	}
	return max, 0
}

// byteIndexOfRune returns the byte offset of the n-th rune of s (len(s)
// when s is shorter).
func byteIndexOfRune(s string, n int) int {
	for i := range s {
		if n == 0 {
			return i
		}
		n--
	}
	return len(s)
}

// openFenceAtEnd reports the fence still open at the end of s: its
// opening line and its marker ("```", "~~~~"…); both "" when none.
func openFenceAtEnd(s string) (opener, marker string) {
	for _, line := range strings.Split(s, "\n") {
		if marker != "" {
			if closesFence(line, marker) {
				opener, marker = "", ""
			}
			continue
		}
		if m := fenceOpen.FindStringSubmatch(line); m != nil && !(m[1][0] == '`' && strings.Contains(m[2], "`")) {
			opener, marker = strings.TrimLeft(line, " "), m[1]
		}
	}
	return opener, marker
}

// truncateMessage cuts text to at most limit characters at a safe
// boundary (closing an open code fence) and marks the cut with "…".
func truncateMessage(text string, limit int) string {
	if utf8.RuneCountInString(text) <= limit {
		return text
	}
	return splitMessage(text, limit-2)[0] + "\n…"
}

// truncateRunes cuts s to at most n runes, ending with "…" when cut.
func truncateRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}
