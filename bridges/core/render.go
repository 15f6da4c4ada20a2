package core

import (
	"context"
	"regexp"
	"strings"
	"time"

	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/render"
	"github.com/agentbridge/agentbridge/config"
)

// toolLine is the compact one-line summary of a tool call (render.ToolLine),
// the bridge's own tools shown by their short names.
func toolLine(u streamjson.ToolUse, workdir string) string {
	if name, d, ok := agentToolDetail(u.Name, render.InputMap(u.Input), workdir); ok {
		return render.ToolLineOf(u, name, d)
	}
	return render.ToolLine(u, workdir)
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

// mention names a user in a message.
func mention(a author) string { return render.Mention(a.name, a.id) }

// verbosity returns the bot's verbosity, defaulting to compact.
func verbosity(b *config.Bot) string {
	if b.Verbosity == "" {
		return config.VerbosityCompact
	}
	return b.Verbosity
}

// Short names for the render helpers the core's texts use most.
func codeSpan(s string) string              { return render.CodeSpan(s) }
func codeBlock(lang, s string) string       { return render.CodeBlock(lang, s) }
func oneLine(s string, n int) string        { return render.OneLine(s, n) }
func clip(s string, n, maxRunes int) string { return render.Clip(s, n, maxRunes) }
func formatDuration(d time.Duration) string { return render.FormatDuration(d) }
func usd(x float64) string                  { return render.USD(x) }

// CodeSpan is render.CodeSpan, for the features' texts.
func CodeSpan(s string) string { return render.CodeSpan(s) }

// OneLine is render.OneLine, for the features' texts.
func OneLine(s string, n int) string { return render.OneLine(s, n) }

// USD is render.USD, for the features' texts.
func USD(x float64) string { return render.USD(x) }

// Preview sizes of a card (render.PreviewLines, render.PreviewRunes).
const (
	previewLines = render.PreviewLines
	previewRunes = render.PreviewRunes
)
