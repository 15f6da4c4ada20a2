package core

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/markdown"
	"github.com/agentbridge/agentbridge/config"
)

// defaultMaxRunes is used when an adapter reports no message limit.
const defaultMaxRunes = 4000

// toolLine is the compact one-line summary of a tool call ("Bash: git
// status"), as markdown, or "" for tools that show their own card.
func toolLine(u streamjson.ToolUse, workdir string) string {
	in := inputMap(u.Input)
	var detail string
	switch u.Name {
	case "AskUserQuestion", "ExitPlanMode", "EnterPlanMode":
		return ""
	case "Bash":
		detail = firstLine(str(in, "command"))
		if b, _ := in["run_in_background"].(bool); b {
			detail += " (background)"
		}
	case "Read", "Write", "Edit", "MultiEdit":
		detail = relPath(str(in, "file_path"), workdir)
	case "NotebookEdit":
		detail = relPath(str(in, "notebook_path"), workdir)
	case "Glob":
		detail = str(in, "pattern")
	case "Grep":
		detail = str(in, "pattern")
		if p := str(in, "path"); p != "" {
			detail += " in " + relPath(p, workdir)
		}
	case "WebFetch":
		detail = str(in, "url")
	case "WebSearch":
		detail = str(in, "query")
	case "Agent", "Task":
		detail = str(in, "description")
	case "TodoWrite":
		todos, _ := in["todos"].([]any)
		detail = fmt.Sprintf("%d items", len(todos))
	default:
		if name, d, ok := agentToolDetail(u.Name, in, workdir); ok {
			u.Name, detail = name, d
			break
		}
		detail = compactJSON(u.Input, 80)
	}
	line := u.Name
	if detail != "" {
		line += ": " + oneLine(detail, 120)
	}
	prefix := "› "
	if u.ParentToolUseID != "" {
		prefix = "  › " // inside a subagent
	}
	return prefix + codeSpan(line)
}

// toolIDRE matches a tool_use id that may appear in a tool line's link.
var toolIDRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,100}$`)

// showTool hands a tool call to a platform that shows calls in full
// (bridges.ToolViewer) and returns line (a tool line, or "") as a link to
// the call for it; other platforms get line unchanged and no call.
func (cv *conversation) showTool(ctx context.Context, line string, call bridges.ToolCall) string {
	tv, ok := cv.platform.(bridges.ToolViewer)
	if !ok || !toolIDRE.MatchString(call.ID) {
		return line
	}
	if err := tv.ShowTool(ctx, cv.key, call); err != nil {
		cv.log.Warn("show a tool call", "tool", call.ID, "err", err)
		return line
	}
	prefix, span, found := strings.Cut(line, "› ")
	if !found || span == "" {
		return line
	}
	return prefix + "› [" + span + "](" + bridges.ToolLinkScheme + call.ID + ")"
}

// resultLine abbreviates a tool result for the full verbosity.
func resultLine(r streamjson.ToolResult) string {
	content := strings.TrimSpace(r.Content)
	lines := strings.Count(content, "\n") + 1
	s := oneLine(firstLine(content), 100)
	if lines > 1 {
		s += fmt.Sprintf(" (+%d lines)", lines-1)
	}
	mark := "↳ "
	if r.IsError {
		mark = "↳ ✗ "
	}
	if content == "" {
		return "   " + mark + "(no output)"
	}
	return "   " + mark + codeSpan(s)
}

// footer is the compact duration and cost line of a turn.
func footer(d time.Duration, cost float64) string {
	return fmt.Sprintf("_%s · $%.4f_", formatDuration(d), cost)
}

func formatDuration(d time.Duration) string {
	if d < time.Minute {
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	d = d.Round(time.Second)
	return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
}

// resultError describes a failed result for the thread.
func resultError(r streamjson.Result) string {
	switch {
	case strings.TrimSpace(r.Text) != "":
		return "⚠️ " + strings.TrimSpace(r.Text)
	case r.Subtype == "error_max_turns":
		return "⚠️ The agent stopped: it reached the maximum number of turns."
	case r.Subtype == "error_max_budget_usd":
		return "⚠️ The agent stopped: its budget is used up."
	case len(r.Errors) > 0:
		return "⚠️ The turn failed: " + oneLine(strings.Join(r.Errors, "; "), 500)
	default:
		return "⚠️ The turn failed (" + r.Subtype + ")."
	}
}

// chunks splits text for posting: each chunk trimmed, empty ones dropped.
func chunks(text string, maxRunes int) []string {
	var out []string
	for _, c := range markdown.Split(text, maxRunes) {
		if c = strings.TrimRight(strings.TrimLeft(c, "\n"), " \t\n"); c != "" {
			out = append(out, c)
		}
	}
	return out
}

// tail returns the end of text that fits in maxRunes, for a live preview of
// a text that has grown beyond one message.
func tail(text string, maxRunes int) string {
	if utf8.RuneCountInString(text) <= maxRunes {
		return text
	}
	cs := chunks(text, maxRunes-2)
	if len(cs) == 0 {
		return ""
	}
	return "…\n" + cs[len(cs)-1]
}

// codeSpan renders s as an inline code span, safe for any backticks in s.
func codeSpan(s string) string {
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

// codeBlock renders s as a fenced code block with the given language.
func codeBlock(lang, s string) string {
	fence := "```"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	return fence + lang + "\n" + strings.TrimRight(s, "\n") + "\n" + fence
}

// mention names a user in a message.
func mention(a author) string {
	switch {
	case a.name != "":
		return "@" + a.name
	case a.id != "":
		return "@" + a.id
	default:
		return "someone"
	}
}

// oneLine collapses whitespace runs and truncates to n runes with "…".
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	return truncate(s, n)
}

// truncate cuts s to at most n runes, ending in "…" when cut.
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:max(0, n-1)]) + "…"
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// relPath shows p relative to the agent's workdir when it is inside it.
func relPath(p, workdir string) string {
	if p == "" || workdir == "" {
		return p
	}
	if rel, err := filepath.Rel(workdir, p); err == nil && !strings.HasPrefix(rel, "..") {
		return rel
	}
	return p
}

// inputMap decodes a tool input object (nil on failure).
func inputMap(raw json.RawMessage) map[string]any {
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	return m
}

func str(m map[string]any, k string) string {
	s, _ := m[k].(string)
	return s
}

// compactJSON renders raw compactly, truncated to n runes.
func compactJSON(raw json.RawMessage, n int) string {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return truncate(string(raw), n)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return truncate(string(raw), n)
	}
	return truncate(string(b), n)
}

// verbosity returns the bot's verbosity, defaulting to compact.
func verbosity(b *config.Bot) string {
	if b.Verbosity == "" {
		return config.VerbosityCompact
	}
	return b.Verbosity
}

// formatWait renders a timeout compactly: "10m", "1h30m", "45s".
func formatWait(d time.Duration) string {
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

// CodeSpan is codeSpan for the features' texts (bridges/worktree…).
func CodeSpan(s string) string { return codeSpan(s) }

// OneLine is oneLine for the features' texts.
func OneLine(s string, n int) string { return oneLine(s, n) }

// usd formats dollars: cents from $1 up ("$20.00"), else up to four
// decimals ("$0.0025", "$0.50"; six below a cent, "$0.000012") without
// trailing zeros, "$0" for nothing.
func usd(x float64) string {
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

// USD is usd for the features' texts (bridges/spend).
func USD(x float64) string { return usd(x) }
