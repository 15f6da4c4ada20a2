package markdown

import "unicode"

// Search caps keep the span scanners linear on hostile input: a construct
// longer than this is not protected (it would not fit a chat message anyway).
const (
	maxLinkText = 1000
	maxLinkDest = 2000
	maxURL      = 4000
	maxCodeSpan = 4000
)

// fence is one fenced code block of the input.
type fence struct {
	reopen     string // the opening line, repeated at the top of a continuation chunk
	close      string // indentation + marker, appended to close a chunk
	closeRunes int    // len([]rune(close))
	repairable bool   // reopen and close fit the limit's budget (see analyse)
}

// analysis holds what the splitter needs to know about every cut position
// i (0..n): cutting at i puts r[:i] before the cut and r[i:] after it.
type analysis struct {
	r       []rune
	fences  []fence
	fenceAt []int32 // fence index a cut at i lands inside, -1 if none
	noCut   []bool  // cutting at i would split a protected construct
	fenceLn []bool  // i is inside a fence-like line (not at its start)
}

// fenceMarker reports whether line (without its newline) starts, after at
// most three spaces, with a run of at least three '`' or '~'. It returns the
// indentation width, the marker character and the run length.
func fenceMarker(line []rune) (indent int, ch rune, run int, ok bool) {
	for indent < len(line) && indent < 4 && line[indent] == ' ' {
		indent++
	}
	if indent > 3 || indent >= len(line) {
		return 0, 0, 0, false
	}
	ch = line[indent]
	if ch != '`' && ch != '~' {
		return 0, 0, 0, false
	}
	for indent+run < len(line) && line[indent+run] == ch {
		run++
	}
	return indent, ch, run, run >= 3
}

// isOpener reports whether line opens a fenced code block (CommonMark: a
// backtick fence's info string may not contain backticks).
func isOpener(line []rune) (indent int, ch rune, run int, ok bool) {
	indent, ch, run, ok = fenceMarker(line)
	if !ok {
		return 0, 0, 0, false
	}
	if ch == '`' {
		for _, c := range line[indent+run:] {
			if c == '`' {
				return 0, 0, 0, false
			}
		}
	}
	return indent, ch, run, true
}

// isCloser reports whether line closes a fence opened with ch × run.
func isCloser(line []rune, ch rune, run int) bool {
	indent, c, n, ok := fenceMarker(line)
	if !ok || c != ch || n < run {
		return false
	}
	for _, x := range line[indent+n:] {
		if x != ' ' && x != '\t' {
			return false
		}
	}
	return true
}

// analyse scans r for fenced code blocks and protected spans. A fence is
// repairable when its opening line fits in a quarter of maxRunes, so that a
// chunk always has room for the reopened line, the closing marker and text.
func analyse(r []rune, maxRunes int) *analysis {
	n := len(r)
	a := &analysis{
		r:       r,
		fenceAt: make([]int32, n+1),
		noCut:   make([]bool, n+1),
		fenceLn: make([]bool, n+1),
	}
	code := make([]bool, n) // rune belongs to a fenced block (fence lines included)
	cur := int32(-1)
	var curCh rune
	var curRun int
	for ls := 0; ; {
		le := ls
		for le < n && r[le] != '\n' {
			le++
		}
		line := r[ls:le]
		a.fenceAt[ls] = cur // a cut before the line
		if _, _, _, like := fenceMarker(line); like {
			for i := ls + 1; i <= le; i++ {
				a.fenceLn[i] = true // cutting a fence-like line would break fences
			}
		}
		after := cur
		switch {
		case cur >= 0 && isCloser(line, curCh, curRun):
			after = -1
		case cur < 0:
			if indent, ch, run, ok := isOpener(line); ok {
				a.fences = append(a.fences, fence{
					reopen:     string(line),
					close:      string(line[:indent+run]),
					closeRunes: indent + run,
					repairable: len(line) <= maxRunes/4,
				})
				after, curCh, curRun = int32(len(a.fences)-1), ch, run
			}
		}
		// Cuts inside the line: only content lines allow them (fence lines
		// are fenceLn), and a content line does not change the state.
		for i := ls + 1; i <= le; i++ {
			a.fenceAt[i] = cur
		}
		if cur >= 0 || after >= 0 {
			for i := ls; i < le; i++ {
				code[i] = true
			}
			if le < n {
				code[le] = true
			}
		}
		cur = after
		if le >= n {
			break
		}
		ls = le + 1
	}
	a.fenceAt[n] = cur // the end of the text: an unclosed fence is still open
	for i := range a.fenceAt {
		if f := a.fenceAt[i]; f >= 0 && !a.fences[f].repairable {
			a.fenceAt[i] = -1
		}
	}
	a.protectSpans(code)
	return a
}

// protect forbids cuts strictly inside [start, end).
func (a *analysis) protect(start, end int) {
	for i := start + 1; i < end && i < len(a.noCut); i++ {
		a.noCut[i] = true
	}
}

// protectSpans marks inline code spans, links, autolinks and bare URLs
// outside fenced blocks.
func (a *analysis) protectSpans(code []bool) {
	r := a.r
	n := len(r)
	for i := 0; i < n; {
		if code[i] {
			i++
			continue
		}
		switch {
		case r[i] == '`':
			i = a.codeSpan(code, i)
		case r[i] == '[' || (r[i] == '!' && i+1 < n && r[i+1] == '['):
			if end := linkEnd(r, code, i); end > 0 {
				a.protect(i, end)
				i = end
			} else {
				i++
			}
		case r[i] == '<':
			if end := autolinkEnd(r, i); end > 0 {
				a.protect(i, end)
				i = end
			} else {
				i++
			}
		case (r[i] == 'h' || r[i] == 'H') && (i == 0 || !isWordRune(r[i-1])):
			if end := bareURLEnd(r, i); end > 0 {
				a.protect(i, end)
				i = end
			} else {
				i++
			}
		default:
			i++
		}
	}
}

// codeSpan protects the code span opened by the backtick run at i and returns
// where scanning continues.
func (a *analysis) codeSpan(code []bool, i int) int {
	r := a.r
	n := len(r)
	k := 0
	for i+k < n && r[i+k] == '`' {
		k++
	}
	for j := i + k; j < n && j-i < maxCodeSpan && !code[j]; {
		if r[j] == '\n' && j+1 < n && r[j+1] == '\n' {
			break // a blank line ends the paragraph: no span
		}
		if r[j] != '`' {
			j++
			continue
		}
		m := 0
		for j+m < n && r[j+m] == '`' {
			m++
		}
		if m == k {
			a.protect(i, j+m)
			return j + m
		}
		j += m
	}
	return i + k
}

// linkEnd returns the end of an inline link or image starting at i
// ("[text](dest)" or "![alt](dest)"), or 0 if there is none.
func linkEnd(r []rune, code []bool, i int) int {
	n := len(r)
	j := i
	if r[j] == '!' {
		j++
	}
	depth := 0
	k := j
	for ; k < n && k-j < maxLinkText; k++ {
		if code[k] {
			return 0
		}
		switch r[k] {
		case '\\':
			k++
		case '[':
			depth++
		case ']':
			depth--
		case '\n':
			if k+1 < n && r[k+1] == '\n' {
				return 0
			}
		}
		if depth == 0 {
			break
		}
	}
	if k >= n || depth != 0 || k+1 >= n || r[k+1] != '(' {
		return 0
	}
	depth = 0
	for m := k + 1; m < n && m-k < maxLinkDest; m++ {
		switch r[m] {
		case '\\':
			m++
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return m + 1
			}
		case '\n':
			return 0
		}
	}
	return 0
}

// autolinkEnd returns the end of "<scheme:...>" at i, or 0.
func autolinkEnd(r []rune, i int) int {
	n := len(r)
	j := i + 1
	for j < n && j-i <= 33 && (unicode.IsLetter(r[j]) || unicode.IsDigit(r[j]) || r[j] == '+' || r[j] == '.' || r[j] == '-') {
		j++
	}
	if j-i-1 < 2 || j >= n || r[j] != ':' {
		return 0
	}
	for k := j + 1; k < n && k-i < maxURL; k++ {
		switch {
		case r[k] == '>':
			return k + 1
		case r[k] == '<' || unicode.IsSpace(r[k]) || unicode.IsControl(r[k]):
			return 0
		}
	}
	return 0
}

// bareURLEnd returns the end of a bare http(s) URL at i (up to the next
// whitespace or '<'), or 0.
func bareURLEnd(r []rune, i int) int {
	n := len(r)
	var j int
	switch {
	case hasPrefixFold(r[i:], "https://"):
		j = i + len("https://")
	case hasPrefixFold(r[i:], "http://"):
		j = i + len("http://")
	default:
		return 0
	}
	for j < n && j-i < maxURL && !unicode.IsSpace(r[j]) && r[j] != '<' {
		j++
	}
	return j
}

func hasPrefixFold(r []rune, p string) bool {
	if len(r) < len(p) {
		return false
	}
	for i := range len(p) {
		if unicode.ToLower(r[i]) != rune(p[i]) {
			return false
		}
	}
	return true
}

func isWordRune(c rune) bool { return unicode.IsLetter(c) || unicode.IsDigit(c) || c == '_' }
