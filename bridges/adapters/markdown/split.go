// Package markdown holds platform-neutral helpers for the CommonMark text the
// agent writes: splitting long text into chat-sized chunks.
package markdown

import "unicode"

// Split cuts text into chunks of at most maxRunes runes each, preferring to
// cut at a paragraph break, then at a line break, then between words, and
// only then between any two runes. It never cuts inside a rune, and it does
// not cut inside an inline code span, a link or image ("[x](y)"), an
// autolink ("<https://…>") or a bare URL unless that construct alone is
// longer than a chunk can hold.
//
// A cut inside a fenced code block closes the fence at the end of the chunk
// and reopens it, with the same opening line (so the same language), at the
// start of the next one; a fence left open at the end of the text is closed
// too, so every chunk has balanced fences. Fences whose opening line is
// longer than a quarter of maxRunes cannot be repeated within the limit and
// are split like plain text, and a run of backticks or tildes that long may
// have to start a chunk (where it reads as a fence); neither happens with
// chat-sized limits.
//
// Whitespace at a cut stays at the end of the earlier chunk: concatenating
// the chunks gives back text, except for the fence lines Split added.
// Callers usually trim each chunk before posting it. An empty text gives no
// chunks; maxRunes <= 0 means no limit.
func Split(text string, maxRunes int) []string {
	ps := split(text, maxRunes)
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.prefix + p.body + p.suffix
	}
	return out
}

// piece is one chunk: body is a slice of the input, prefix and suffix are
// the fence lines added around it.
type piece struct{ prefix, body, suffix string }

// Cut kinds, best first.
const (
	cutParagraph = iota
	cutLine
	cutWord
	cutRune
	numCutKinds
)

func split(text string, maxRunes int) []piece {
	if text == "" {
		return nil
	}
	r := []rune(text)
	n := len(r)
	if maxRunes <= 0 {
		maxRunes = n + 1<<20 // large enough for the text plus any fence lines
	}
	a := analyse(r, maxRunes)
	var out []piece
	for s := 0; s < n; {
		prefix := a.prefixAt(s)
		p := len([]rune(prefix))
		if p+(n-s)+a.suffixLen(n) <= maxRunes {
			out = append(out, piece{prefix, string(r[s:]), a.suffixAt(n)})
			break
		}
		cut := a.chooseCut(s, p, maxRunes)
		out = append(out, piece{prefix, string(r[s:cut]), a.suffixAt(cut)})
		s = cut
	}
	return out
}

// chooseCut picks where the chunk starting at s (with a prefix of p runes)
// ends. It returns a position in (s, n).
func (a *analysis) chooseCut(s, p, maxRunes int) int {
	r := a.r
	n := len(r)
	end := min(n-1, s+maxRunes-p)
	var best [numCutKinds]int
	anyAllowed, fenceSafe, forced := 0, 0, 0
	for i := end; i > s; i-- {
		if p+(i-s)+a.suffixLen(i) > maxRunes {
			continue
		}
		if forced == 0 {
			forced = i
		}
		if !a.fenceSafe(i) {
			continue
		}
		if fenceSafe == 0 {
			fenceSafe = i
		}
		if a.noCut[i] {
			continue
		}
		if anyAllowed == 0 {
			anyAllowed = i
		}
		k := a.kind(i)
		if best[k] == 0 {
			best[k] = i
		}
		if k == cutParagraph {
			break // nothing later can beat the last paragraph break
		}
	}
	// A better kind of cut wins if it still fills a quarter of the chunk;
	// otherwise take the furthest allowed cut of any kind.
	minFill := max(1, (maxRunes-p)/4)
	for k := range numCutKinds {
		if best[k] > 0 && best[k]-s >= minFill {
			return best[k]
		}
	}
	if anyAllowed > 0 {
		return anyAllowed
	}
	if fenceSafe > 0 {
		return fenceSafe // a protected construct longer than a chunk
	}
	if forced > 0 {
		return forced // a fence-like line longer than a chunk
	}
	return min(n-1, s+1) // cannot happen with the quarter rule; guarantees progress
}

// fenceSafe reports whether a cut at i (0 < i < n) keeps fence lines whole
// and does not make the next chunk start with text that would read as a
// fence line.
func (a *analysis) fenceSafe(i int) bool {
	if a.fenceLn[i] {
		return false
	}
	if a.r[i-1] == '\n' {
		return true
	}
	// A cut inside a line starts a new line in the next chunk.
	j := i
	for j < len(a.r) && j-i < 3 && a.r[j] == ' ' {
		j++
	}
	if j+3 <= len(a.r) {
		c := a.r[j]
		if (c == '`' || c == '~') && a.r[j+1] == c && a.r[j+2] == c {
			return false
		}
	}
	return true
}

// kind classifies a cut at i (0 < i < n).
func (a *analysis) kind(i int) int {
	r := a.r
	switch {
	case r[i-1] == '\n' && i >= 2 && r[i-2] == '\n' && r[i] != '\n':
		return cutParagraph
	case r[i-1] == '\n':
		return cutLine
	case unicode.IsSpace(r[i-1]) && !unicode.IsSpace(r[i]):
		return cutWord
	default:
		return cutRune
	}
}

// prefixAt is what a chunk starting at i begins with: the reopened fence.
func (a *analysis) prefixAt(i int) string {
	if f := a.fenceAt[i]; f >= 0 && i > 0 {
		return a.fences[f].reopen + "\n"
	}
	return ""
}

// suffixAt is what a chunk ending at i ends with: the closing fence.
func (a *analysis) suffixAt(i int) string {
	f := a.fenceAt[i]
	if f < 0 {
		return ""
	}
	if i > 0 && a.r[i-1] == '\n' {
		return a.fences[f].close
	}
	return "\n" + a.fences[f].close
}

// suffixLen is the length of suffixAt(i) in runes.
func (a *analysis) suffixLen(i int) int {
	f := a.fenceAt[i]
	if f < 0 {
		return 0
	}
	if i > 0 && a.r[i-1] == '\n' {
		return a.fences[f].closeRunes
	}
	return 1 + a.fences[f].closeRunes
}
