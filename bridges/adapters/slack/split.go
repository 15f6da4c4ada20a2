package slack

import (
	"strings"
	"unicode/utf8"
)

const (
	fence      = "```"
	fenceOpen  = fence + "\n"
	fenceClose = "\n" + fence
)

// splitMrkdwn splits mrkdwn text into chunks of at most limit runes each.
// It cuts at a paragraph break, else a line break, else a space, and never
// inside a <link|label>, an &entity; or an inline `code` span. A cut inside
// a ``` block closes the block and reopens it in the next chunk. Text that
// already fits is returned as the only chunk; "" gives no chunks.
func splitMrkdwn(s string, limit int) []string {
	if s == "" {
		return nil
	}
	if limit < 32 {
		limit = 32 // room for the fence markers and some text
	}
	var out []string
	inFence := false
	for s != "" {
		prefix := ""
		if inFence {
			prefix = fenceOpen
		}
		budget := limit - utf8.RuneCountInString(prefix)
		if utf8.RuneCountInString(s) <= budget {
			out = append(out, prefix+s)
			break
		}
		window := budget - utf8.RuneCountInString(fenceClose)
		cut := chooseCut(s, runeOffset(s, window), inFence)
		chunk := strings.TrimRight(s[:cut], "\n")
		endInFence := fenceAfter(inFence, s[:cut])
		piece := prefix + chunk
		if endInFence {
			piece += fenceClose
		}
		if strings.TrimSpace(chunk) != "" || endInFence != inFence {
			out = append(out, piece)
		}
		s = s[cut:]
		if !endInFence {
			s = strings.TrimLeft(s, "\n")
		} else {
			s = strings.TrimPrefix(s, "\n")
		}
		if strings.HasPrefix(s, " ") && !endInFence {
			s = s[1:]
		}
		inFence = endInFence
	}
	return out
}

// runeOffset is the byte offset of the n-th rune of s (len(s) if shorter).
func runeOffset(s string, n int) int {
	for i := range s {
		if n == 0 {
			return i
		}
		n--
	}
	return len(s)
}

// chooseCut picks a byte offset in s[:max] (max > 0) to cut at.
func chooseCut(s string, max int, inFence bool) int {
	window := s[:max]
	floor := max / 3
	cut := -1
	for _, sep := range []string{"\n\n", "\n", " "} {
		if i := strings.LastIndex(window, sep); i > floor {
			cut = i
			break
		}
	}
	if cut < 0 {
		for _, sep := range []string{"\n", " "} {
			if i := strings.LastIndex(window, sep); i > 0 {
				cut = i
				break
			}
		}
	}
	if cut < 0 {
		cut = max
	}
	if safe := safeCut(s, cut, inFence); safe > 0 {
		return safe
	}
	if safe := safeCut(s, max, inFence); safe > 0 {
		return safe
	}
	return max // one unbreakable token longer than a chunk
}

// safeCut moves cut back so that it is not inside a <…> link, an &…;
// entity or an inline code span. It returns 0 when no safe cut is left.
func safeCut(s string, cut int, inFence bool) int {
	for range 8 {
		lineStart := strings.LastIndexByte(s[:cut], '\n') + 1
		line := s[lineStart:cut]
		inCode := fenceAfter(inFence, s[:lineStart])
		moved := false
		// Every raw "<" opens a link or mention (text and code are escaped).
		if lt := strings.LastIndexByte(line, '<'); lt >= 0 && lt > strings.LastIndexByte(line, '>') {
			cut = lineStart + lt
			moved = true
		} else if amp := strings.LastIndexByte(line, '&'); amp >= 0 && len(line)-amp <= 8 && !strings.Contains(line[amp:], ";") && strings.Contains(s[cut:min(len(s), cut+8)], ";") {
			cut = lineStart + amp
			moved = true
		} else if !inCode && !strings.HasPrefix(strings.TrimLeft(line, " "), fence) && strings.Count(line, "`")%2 == 1 {
			cut = lineStart + strings.LastIndexByte(line, '`')
			moved = true
		}
		if !moved {
			return cut
		}
		if cut <= 0 {
			return 0
		}
	}
	return cut
}

// fenceAfter reports whether a ``` block is open at the end of text, given
// whether one was open at its start.
func fenceAfter(open bool, text string) bool {
	if text == "" {
		return open
	}
	for line := range strings.SplitSeq(text, "\n") {
		if strings.HasPrefix(strings.TrimLeft(line, " "), fence) {
			open = !open
		}
	}
	return open
}

// truncateBytes cuts s to at most n bytes on a rune boundary.
func truncateBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
