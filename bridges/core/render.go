package core

import (
	"time"

	"github.com/agentbridge/agentbridge/agent/streamjson"
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
