// Package toolconv is the seam between the bridge's agent tools (bridges/agenttools)
// and the core: the conversation the core hands the tools, the tools' names,
// and how a call of them reads in the chat. The core imports this package,
// not the tools; neither imports the core.
package toolconv

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/render"
	"github.com/agentbridge/agentbridge/bridges/schedule/schedreq"
)

// This file is the seam between the tools and the core: the conversation
// the core hands the tools (Conversation, implemented in bridges/core),
// the tools' names, and how a call of them reads in the chat. The core
// imports it; this package never imports the core.

// ServerName is the name of the bridge's MCP server as the agent sees it:
// its tools are mcp__bridge__send_message and so on.
const ServerName = "bridge"

// The bridge's agent tools.
const (
	ToolSendMessage    = "send_message"
	ToolSendFile       = "send_file"
	ToolSchedule       = "schedule"
	ToolListSchedules  = "list_schedules"
	ToolCancelSchedule = "cancel_schedule"
)

// Conversation is what the agent's tools may do in the one conversation
// whose agent process they serve: the narrow face the core offers them
// instead of *core.Core. It is safe for concurrent use (tool calls run on
// the agent session's goroutines, never on the worker). Errors a tool
// should report as a refusal (the agent asked for something it may not
// have) wrap ErrRefused.
type Conversation interface {
	Key() bridges.ConversationKey
	// Log is the conversation's logger.
	Log() *slog.Logger
	// Workdir is the agent's working directory at spawn time.
	Workdir() string
	// Hidden are the bridge's own paths no tool may read (SecretPaths).
	Hidden() []string
	// UploadLimit is the platform's limit on an upload (0 = none), ok
	// false when the platform cannot take files.
	UploadLimit() (max int64, ok bool)
	// PostText posts text, split into messages the platform takes, within
	// the channel's post budget, and returns how many it posted.
	PostText(ctx context.Context, text string) (int, error)
	// Upload posts a file within the channel's post budget.
	Upload(ctx context.Context, u bridges.Upload) error
	// ScheduleNote tells the agent, in the schedule tool's description,
	// the limits of schedules and what agent_schedules does with requests.
	ScheduleNote() string
	// RequestSchedule creates, asks approval for, or refuses a schedule
	// the agent asks for, per the profile's agent_schedules, and returns
	// the tool's answer.
	RequestSchedule(ctx context.Context, r ScheduleAsk) (string, error)
	// ListSchedules describes the conversation's schedules.
	ListSchedules(ctx context.Context) (string, error)
	// CancelSchedule cancels the conversation's schedule id.
	CancelSchedule(ctx context.Context, id int64) (string, error)
	// ToolCalled counts a tool call's outcome (ok, refused, error).
	ToolCalled(tool, outcome string)
}

// ScheduleAsk is the agent's schedule tool call.
type ScheduleAsk struct {
	Name, Cron, TZ, Prompt string
}

// ErrRefused wraps a refusal the agent should read as a tool error (a bad
// argument, a schedule it may not have), as opposed to a failure.
var ErrRefused = errors.New("refused")

// IsRefusal reports whether err is a refusal, not a failure.
func IsRefusal(err error) bool {
	return errors.Is(err, ErrRefused) || errors.Is(err, schedreq.ErrRefused)
}

// ErrorText is what the model reads for a failed call: the refusal's
// reason without its sentinel, or the failure message.
func ErrorText(err error, sentinels ...error) string {
	msg := err.Error()
	for _, sentinel := range append([]error{ErrRefused, schedreq.ErrRefused}, sentinels...) {
		msg = strings.TrimSuffix(strings.TrimPrefix(msg, sentinel.Error()+": "), ": "+sentinel.Error())
	}
	return msg
}

// CodeSnippet is the text of a file shown inline: its name and a code
// block of body in lang.
func CodeSnippet(name, lang, body string) string {
	return "📄 " + render.CodeSpan(name) + "\n" + render.CodeBlock(lang, body)
}

// Qualified is the name the CLI gives tool of the bridge's server.
func Qualified(tool string) string { return "mcp__" + ServerName + "__" + tool }

// IsOwn reports whether a CLI tool name is one of the bridge's own.
func IsOwn(name string) bool { return strings.HasPrefix(name, "mcp__"+ServerName+"__") }

// Allowed are the --allowed-tools entries that let the CLI call the
// bridge's tools without asking, in the order the agent sees them.
func Allowed() []string {
	names := []string{ToolSendMessage, ToolSendFile, ToolSchedule, ToolListSchedules, ToolCancelSchedule}
	out := make([]string, 0, len(names))
	for _, n := range names {
		out = append(out, Qualified(n))
	}
	return out
}

// Detail is the tool line of a call of the bridge's own tools: the short
// name and what it acts on (ok false for other tools).
func Detail(name string, in map[string]any, workdir string) (short, detail string, ok bool) {
	if !IsOwn(name) {
		return "", "", false
	}
	short = strings.TrimPrefix(name, "mcp__"+ServerName+"__")
	switch short {
	case ToolSendMessage:
		return short, render.FirstLine(render.Str(in, "text")), true
	case ToolSendFile:
		return short, render.RelPath(render.Str(in, "path"), workdir), true
	case ToolSchedule:
		return short, render.Str(in, "cron") + " — " + render.FirstLine(render.Str(in, "prompt")), true
	case ToolCancelSchedule:
		if id, ok := in["id"].(float64); ok {
			return short, fmt.Sprintf("#%d", int64(id)), true
		}
	}
	return short, "", true
}
