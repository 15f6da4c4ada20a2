package render

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/internal/textcut"
)

// ToolLine is the compact one-line summary of a tool call ("Bash: git
// status"), as markdown, or "" for tools that show their own card. A tool
// it does not know shows its "description" (what an ACP agent titled the
// call: agent/acp) or else its input as compact JSON; an MCP tool
// (mcp__…) always its input.
func ToolLine(u streamjson.ToolUse, workdir string) string {
	in := InputMap(u.Input)
	var detail string
	switch u.Name {
	case "AskUserQuestion", "ExitPlanMode", "EnterPlanMode":
		return ""
	case "Bash":
		detail = FirstLine(Str(in, "command"))
		if b, _ := in["run_in_background"].(bool); b {
			detail += " (background)"
		}
	case "Read", "Write", "Edit", "MultiEdit":
		detail = RelPath(Str(in, "file_path"), workdir)
	case "NotebookEdit":
		detail = RelPath(Str(in, "notebook_path"), workdir)
	case "Glob":
		detail = Str(in, "pattern")
	case "Grep":
		detail = Str(in, "pattern")
		if p := Str(in, "path"); p != "" {
			detail += " in " + RelPath(p, workdir)
		}
	case "WebFetch":
		detail = Str(in, "url")
	case "WebSearch":
		detail = Str(in, "query")
	case "Agent", "Task":
		detail = Str(in, "description")
	case "TodoWrite":
		todos, _ := in["todos"].([]any)
		detail = fmt.Sprintf("%d items", len(todos))
	default:
		detail = Str(in, "description")
		if detail == "" || strings.HasPrefix(u.Name, "mcp__") {
			detail = compactJSON(u.Input, 80)
		}
	}
	return ToolLineOf(u, u.Name, detail)
}

// ToolLineOf is the tool line of call u shown as name and detail ("name:
// detail"), indented when a subagent made the call.
func ToolLineOf(u streamjson.ToolUse, name, detail string) string {
	line := name
	if detail != "" {
		line += ": " + textcut.OneLine(detail, 120)
	}
	prefix := "› "
	if u.ParentToolUseID != "" {
		prefix = "  › " // inside a subagent
	}
	return prefix + CodeSpan(line)
}

// ResultLine abbreviates a tool result for the full verbosity.
func ResultLine(r streamjson.ToolResult) string {
	content := strings.TrimSpace(r.Content)
	lines := strings.Count(content, "\n") + 1
	s := textcut.OneLine(FirstLine(content), 100)
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
	return "   " + mark + CodeSpan(s)
}

// ResultError describes a failed result for the thread.
func ResultError(r streamjson.Result) string {
	switch {
	case strings.TrimSpace(r.Text) != "":
		return "⚠️ " + strings.TrimSpace(r.Text)
	case r.Subtype == "error_max_turns":
		return "⚠️ The agent stopped: it reached the maximum number of turns."
	case r.Subtype == "error_max_budget_usd":
		return "⚠️ The agent stopped: its budget is used up."
	case len(r.Errors) > 0:
		return "⚠️ The turn failed: " + textcut.OneLine(strings.Join(r.Errors, "; "), 500)
	default:
		return "⚠️ The turn failed (" + r.Subtype + ")."
	}
}

// ToolTitle is the plain text of a tool line ("› `Bash: ls`" → "Bash: ls";
// a result line under it is left out).
func ToolTitle(line string) string {
	s, _, _ := strings.Cut(strings.TrimSpace(line), "\n")
	s = strings.TrimSpace(strings.TrimPrefix(s, "›"))
	if ticks := len(s) - len(strings.TrimLeft(s, "`")); ticks > 0 {
		s = strings.TrimSpace(strings.TrimSuffix(s[ticks:], strings.Repeat("`", ticks)))
	}
	return s
}

// PermissionSubject is what policy rules match for a tool: the command for
// Bash, the file path for file tools, the URL for WebFetch.
func PermissionSubject(tool string, input json.RawMessage) string {
	in := InputMap(input)
	switch tool {
	case "Bash":
		return Str(in, "command")
	case "Write", "Edit", "MultiEdit", "Read":
		return Str(in, "file_path")
	case "NotebookEdit":
		return Str(in, "notebook_path")
	case "WebFetch":
		return Str(in, "url")
	case "WebSearch":
		return Str(in, "query")
	default:
		return ""
	}
}

// toolIDRE matches a tool_use id that may appear in a tool line's link.
var toolIDRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,100}$`)

// ToolLinkable reports whether the tool call id may be linked to
// (ToolLink).
func ToolLinkable(id string) bool { return toolIDRE.MatchString(id) }

// ToolLink makes line (a tool line, or "") a link to the call id that a
// platform showing calls in full (bridges.ToolViewer) opens.
func ToolLink(line, id string) string {
	prefix, span, found := strings.Cut(line, "› ")
	if !found || span == "" {
		return line
	}
	return prefix + "› [" + span + "](" + bridges.ToolLinkScheme + id + ")"
}
