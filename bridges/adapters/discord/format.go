package discord

import (
	"regexp"
	"strings"
	"unicode/utf8"
)

// Discord's markdown is close to CommonMark: emphasis, code spans, fenced
// code, block quotes, lists, masked links and headings # to ### render as
// written. toDiscord rewrites only what Discord would show literally:
//
//   - headings #### to ###### become bold lines;
//   - setext headings (text underlined with === or ---) become # / ##;
//   - thematic breaks (---, ***, ___) become a drawn line;
//   - GFM tables become an aligned table in a code block.
//
// Fenced code blocks are never touched. The conversion works line by line
// so that everything else stays byte for byte as the agent wrote it. This
// is why Discord is not a markdown.Dialect: re-rendering from the parsed
// document (as Slack and WhatsApp do with markdown.Render) would rewrite
// what Discord already shows right, e.g. __x__, which Discord underlines.

var (
	deepHeading = regexp.MustCompile(`^ {0,3}#{4,6}(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$`)
	thematic    = regexp.MustCompile(`^ {0,3}(?:(?:-[ \t]*){3,}|(?:\*[ \t]*){3,}|(?:_[ \t]*){3,})$`)
	setextH1    = regexp.MustCompile(`^ {0,3}=+[ \t]*$`)
	setextH2    = regexp.MustCompile(`^ {0,3}-+[ \t]*$`)
	fenceOpen   = regexp.MustCompile("^ {0,3}(`{3,}|~{3,})(.*)$")
	delimCell   = regexp.MustCompile(`^:?-+:?$`)
	blockStart  = regexp.MustCompile(`^ {0,3}(?:[-+*>#|]|\d+[.)]|` + "```|~~~)")
)

// horizontalRule replaces thematic breaks, which Discord shows as text.
const horizontalRule = "──────────"

func toDiscord(md string) string {
	if md == "" {
		return ""
	}
	lines := strings.Split(md, "\n")
	out := make([]string, 0, len(lines))
	fence := "" // the open fence's marker, "" outside code blocks
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if fence != "" {
			out = append(out, line)
			if closesFence(line, fence) {
				fence = ""
			}
			continue
		}
		if m := fenceOpen.FindStringSubmatch(line); m != nil && !(m[1][0] == '`' && strings.Contains(m[2], "`")) {
			fence = m[1]
			out = append(out, line)
			continue
		}
		if n := tableLen(lines[i:]); n > 0 {
			out = append(out, renderTable(lines[i:i+n])...)
			i += n - 1
			continue
		}
		if m := deepHeading.FindStringSubmatch(line); m != nil {
			if strings.TrimSpace(m[1]) != "" {
				out = append(out, "**"+strings.TrimSpace(m[1])+"**")
			}
			continue
		}
		if i+1 < len(lines) && isParagraphLine(line) {
			if setextH1.MatchString(lines[i+1]) {
				out = append(out, "# "+strings.TrimSpace(line))
				i++
				continue
			}
			if setextH2.MatchString(lines[i+1]) {
				out = append(out, "## "+strings.TrimSpace(line))
				i++
				continue
			}
		}
		if thematic.MatchString(line) {
			out = append(out, horizontalRule)
			continue
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n")
}

// closesFence reports whether line closes a fence opened with marker.
func closesFence(line, marker string) bool {
	t := strings.TrimLeft(line, " ")
	if len(line)-len(t) > 3 {
		return false
	}
	t = strings.TrimRight(t, " \t")
	if len(t) < len(marker) {
		return false
	}
	return strings.Trim(t, marker[:1]) == ""
}

// isParagraphLine: plain text that a setext underline would turn into a
// heading (not blank, not the start of another block).
func isParagraphLine(line string) bool {
	if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "    ") || strings.HasPrefix(line, "\t") {
		return false
	}
	return !blockStart.MatchString(line)
}

// tableLen returns the number of lines of the GFM table starting at
// lines[0] (header, delimiter row, body rows), or 0.
func tableLen(lines []string) int {
	if len(lines) < 2 || !strings.Contains(lines[0], "|") {
		return 0
	}
	head := splitCells(lines[0])
	delim := splitCells(lines[1])
	if len(head) == 0 || len(head) != len(delim) {
		return 0
	}
	for _, c := range delim {
		if !delimCell.MatchString(c) {
			return 0
		}
	}
	n := 2
	for n < len(lines) && strings.TrimSpace(lines[n]) != "" && strings.Contains(lines[n], "|") {
		n++
	}
	return n
}

// splitCells splits a table row at unescaped pipes, dropping the outer
// pipes, trimming cells and removing emphasis and code markers.
func splitCells(line string) []string {
	t := strings.TrimSpace(line)
	t = strings.TrimPrefix(t, "|")
	if strings.HasSuffix(t, "|") && !strings.HasSuffix(t, `\|`) {
		t = t[:len(t)-1]
	}
	var cells []string
	var cur strings.Builder
	for i := 0; i < len(t); i++ {
		switch {
		case t[i] == '\\' && i+1 < len(t) && t[i+1] == '|':
			cur.WriteByte('|')
			i++
		case t[i] == '|':
			cells = append(cells, cleanCell(cur.String()))
			cur.Reset()
		default:
			cur.WriteByte(t[i])
		}
	}
	return append(cells, cleanCell(cur.String()))
}

func cleanCell(s string) string {
	s = strings.TrimSpace(s)
	for _, mark := range []string{"**", "__", "`"} {
		s = strings.ReplaceAll(s, mark, "")
	}
	return s
}

// renderTable draws a table as aligned monospace text in a code block.
func renderTable(lines []string) []string {
	var rows [][]string
	for i, l := range lines {
		if i == 1 {
			continue // delimiter row
		}
		rows = append(rows, splitCells(l))
	}
	cols := len(rows[0])
	width := make([]int, cols)
	for _, r := range rows {
		for c := 0; c < cols && c < len(r); c++ {
			width[c] = max(width[c], utf8.RuneCountInString(r[c]))
		}
	}
	line := func(r []string) string {
		var b strings.Builder
		for c := 0; c < cols; c++ {
			cell := ""
			if c < len(r) {
				cell = r[c]
			}
			if c > 0 {
				b.WriteString(" | ")
			}
			b.WriteString(cell)
			if c < cols-1 {
				b.WriteString(strings.Repeat(" ", width[c]-utf8.RuneCountInString(cell)))
			}
		}
		return strings.TrimRight(b.String(), " ")
	}
	out := []string{"```", line(rows[0])}
	sep := make([]string, cols)
	for c := range sep {
		sep[c] = strings.Repeat("-", max(width[c], 1))
	}
	out = append(out, strings.Join(sep, "-+-"))
	for _, r := range rows[1:] {
		out = append(out, line(r))
	}
	return append(out, "```")
}
