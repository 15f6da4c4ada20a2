// Package render builds the core's chat texts from plain values: tool and
// result lines, footers, durations and sizes, chunks and live-preview
// tails, code spans and blocks, the bodies of permission, question and
// plan cards and the reading of typed answers, and the chunks of a native
// stream. It keeps no state and does no I/O; bridges/core calls it.
package render

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentbridge/agentbridge/bridges/adapters/markdown"
	"github.com/agentbridge/agentbridge/internal/textcut"
)

// DefaultMaxRunes is used when an adapter reports no message limit.
const DefaultMaxRunes = 4000

// Footer is the compact duration and cost line of a turn.
func Footer(d time.Duration, cost float64) string {
	return fmt.Sprintf("_%s · $%.4f_", FormatDuration(d), cost)
}

// FooterNoCost is Footer for an agent that reports no cost (an ACP
// agent may not): the duration alone, never a cost of $0.
func FooterNoCost(d time.Duration) string {
	return fmt.Sprintf("_%s · no cost reported_", FormatDuration(d))
}

// FormatDuration renders a turn's duration: "4.2s", "2m05s".
func FormatDuration(d time.Duration) string {
	if d < time.Minute {
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	d = d.Round(time.Second)
	return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
}

// FormatWait renders a timeout compactly: "10m", "1h30m", "45s".
func FormatWait(d time.Duration) string {
	d = d.Round(time.Second)
	h, m, s := int(d.Hours()), int(d.Minutes())%60, int(d.Seconds())%60
	var b strings.Builder
	if h > 0 {
		fmt.Fprintf(&b, "%dh", h)
	}
	if m > 0 {
		fmt.Fprintf(&b, "%dm", m)
	}
	if s > 0 || b.Len() == 0 {
		fmt.Fprintf(&b, "%ds", s)
	}
	return b.String()
}

// Chunks splits text for posting: each chunk trimmed, empty ones dropped.
func Chunks(text string, maxRunes int) []string {
	var out []string
	for _, c := range markdown.Split(text, maxRunes) {
		if c = strings.TrimRight(strings.TrimLeft(c, "\n"), " \t\n"); c != "" {
			out = append(out, c)
		}
	}
	return out
}

// Tail returns the end of text that fits in maxRunes, for a live preview of
// a text that has grown beyond one message.
func Tail(text string, maxRunes int) string {
	if utf8.RuneCountInString(text) <= maxRunes {
		return text
	}
	cs := Chunks(text, maxRunes-2)
	if len(cs) == 0 {
		return ""
	}
	return "…\n" + cs[len(cs)-1]
}

// CodeSpan renders s as an inline code span, safe for any backticks in s.
func CodeSpan(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	longest, run := 0, 0
	for _, c := range s {
		if c == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		s = " " + s + " "
	}
	return fence + s + fence
}

// CodeBlock renders s as a fenced code block with the given language.
func CodeBlock(lang, s string) string {
	fence := "```"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	return fence + lang + "\n" + strings.TrimRight(s, "\n") + "\n" + fence
}

// Mention names a user in a message: "@name", else "@id", else "someone".
func Mention(name, id string) string {
	switch {
	case name != "":
		return "@" + name
	case id != "":
		return "@" + id
	default:
		return "someone"
	}
}

// FirstLine is the first line of s, trimmed.
func FirstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// RelPath shows p relative to the agent's workdir when it is inside it.
func RelPath(p, workdir string) string {
	if p == "" || workdir == "" {
		return p
	}
	if rel, err := filepath.Rel(workdir, p); err == nil && !strings.HasPrefix(rel, "..") {
		return rel
	}
	return p
}

// InputMap decodes a tool input object (nil on failure).
func InputMap(raw json.RawMessage) map[string]any {
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	return m
}

// Str is the string at key k of a decoded input ("" if none).
func Str(m map[string]any, k string) string {
	s, _ := m[k].(string)
	return s
}

// compactJSON renders raw compactly, truncated to n runes.
func compactJSON(raw json.RawMessage, n int) string {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return textcut.Truncate(string(raw), n)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return textcut.Truncate(string(raw), n)
	}
	return textcut.Truncate(string(b), n)
}

// USD formats dollars: cents from $1 up ("$20.00"), else up to four
// decimals ("$0.0025", "$0.50"; six below a cent, "$0.000012") without
// trailing zeros, "$0" for nothing.
func USD(x float64) string {
	switch {
	case x < 1e-9: // float rounding of sums of costs
		return "$0"
	case x >= 1:
		return fmt.Sprintf("$%.2f", x)
	}
	format := "%.4f"
	if x < 0.01 {
		format = "%.6f"
	}
	s := strings.TrimRight(fmt.Sprintf(format, x), "0")
	if len(s) < len("0.00") {
		s += strings.Repeat("0", len("0.00")-len(s))
	}
	return "$" + s
}

// ByteSize renders n bytes compactly: "812 B", "14.2 KB", "25.0 MB".
func ByteSize(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	default:
		return fmt.Sprintf("%d B", n)
	}
}
