package web

import (
	"context"
	"strings"
	"unicode"

	"github.com/agentbridge/agentbridge/store"
)

// Search snippets: how much of a matching message the list shows around
// the match, and how many conversations get one.
const (
	snippetBefore   = 40 // runes before the match
	snippetAfter    = 80 // runes from the match on
	snippetsLimit   = 30 // conversations of a search given a snippet
	snippetMessages = 20 // newest matching messages of each read for it
)

// threadItem is one conversation of the list, with the part of a message
// that matched the search.
type threadItem struct {
	store.WebThread
	Snippet *snippet
}

// snippet is a message's text around a match: Before, the Match (marked)
// and After, each on one line, cut with "…".
type snippet struct {
	Before, Match, After string
}

// searchSnippet finds q (or, failing that, its longest word) in the
// newest of the conversation's messages that the search index matches
// (all of its messages searched, at most snippetMessages read) and returns
// the text around it; nil when no message holds it (the title matched, or
// the index matched a form of the word).
func (c *Console) searchSnippet(ctx context.Context, key store.ConversationKey, q string) *snippet {
	texts, err := c.st.WebMessagesMatching(ctx, key, q, snippetMessages)
	if err != nil {
		c.log.Warn("read a web conversation for a search snippet", "key", key, "err", err)
		return nil
	}
	words := strings.Fields(q)
	tries := []string{q}
	longest := ""
	for _, w := range words {
		if len([]rune(w)) > len([]rune(longest)) {
			longest = w
		}
	}
	if longest != "" && longest != q {
		tries = append(tries, longest)
	}
	for _, try := range tries {
		for _, text := range texts { // newest first
			if s := findSnippet(text, try); s != nil {
				return s
			}
		}
	}
	return nil
}

// findSnippet returns the text around the first case-insensitive match of
// q in text, or nil.
func findSnippet(text, q string) *snippet {
	t, n := []rune(text), []rune(q)
	if len(n) == 0 || len(n) > len(t) {
		return nil
	}
	lower := func(r []rune) []rune {
		out := make([]rune, len(r))
		for i, c := range r {
			out[i] = unicode.ToLower(c)
		}
		return out
	}
	lt, ln := lower(t), lower(n)
	at := -1
	for i := 0; i+len(ln) <= len(lt); i++ {
		if string(lt[i:i+len(ln)]) == string(ln) {
			at = i
			break
		}
	}
	if at < 0 {
		return nil
	}
	start, end := max(0, at-snippetBefore), min(len(t), at+snippetAfter)
	s := &snippet{
		Before: flat(string(t[start:at])),
		Match:  flat(string(t[at : at+len(n)])),
		After:  flat(string(t[at+len(n) : max(end, at+len(n))])),
	}
	if start > 0 { // from a word's start
		if i := strings.IndexByte(s.Before, ' '); i >= 0 {
			s.Before = s.Before[i+1:]
		}
		s.Before = "…" + s.Before
	}
	if end < len(t) { // to a word's end
		if i := strings.LastIndexByte(s.After, ' '); i > 0 {
			s.After = s.After[:i]
		}
		s.After += "…"
	}
	return s
}

// flat puts text on one line: runs of white space become one space.
func flat(s string) string {
	var b strings.Builder
	space := false
	for _, r := range s {
		if unicode.IsSpace(r) {
			space = true
			continue
		}
		if space {
			b.WriteByte(' ')
		}
		space = false
		b.WriteRune(r)
	}
	if space {
		b.WriteByte(' ')
	}
	return b.String()
}
