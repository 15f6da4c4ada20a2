package whatsapp

import (
	"strings"
	"unicode/utf8"

	"github.com/agentbridge/agentbridge/bridges/adapters/markdown"
)

// maxTextRunes is how long one WhatsApp message may be. WhatsApp accepts
// far more (~65,000), but long messages are folded behind "Read more" and
// are hard to read on a phone: answers are split at ~3,500 characters.
const maxTextRunes = 3500

// splitText cuts rendered WhatsApp text into chunks of at most limit
// runes with markdown.Split: paragraph, line, then word boundaries; a cut
// inside a ``` block closes it and reopens it in the next chunk. Chunks
// are trimmed and blank ones dropped; "" gives no chunks.
func splitText(text string, limit int) []string {
	if strings.TrimSpace(text) == "" {
		return nil
	}
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
	return out
}
