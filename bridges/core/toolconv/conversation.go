// Package toolconv is the seam between the bridge's agent tools (bridges/features/agenttools,
// and the tools a feature registers there, such as bridges/features/schedule's) and the
// core: the conversation the core hands the tools, the tools' names, and how a
// call of them reads in the chat. The core imports this package, not the
// tools; neither imports the core.
package toolconv

import (
	"context"
	"errors"
	"log/slog"
	"strings"

	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core/render"
	"github.com/agentbridge/agentbridge/config/profile"
)

// This file is the seam between the tools and the core: the conversation
// the core hands the tools (Conversation, implemented in bridges/core),
// the tools' names, and how a call of them reads in the chat. The core
// imports it; this package never imports the core.

// ServerName is the name of the bridge's MCP server as the agent sees it:
// its tools are mcp__bridge__send_message and so on.
const ServerName = "bridge"

// The bridge's built-in agent tools (bridges/features/agenttools); a feature
// registers more there.
const (
	ToolSendMessage = "send_message"
	ToolSendFile    = "send_file"
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
	// ToolCalled counts a tool call's outcome (ok, refused, error).
	ToolCalled(tool, outcome string)
	// ConvID is the store's id of the conversation.
	ConvID() string
	// Profile is the conversation's agent profile when its agent process
	// started.
	Profile() *profile.Agent
	// Owner is the user id of the conversation's owner ("" for none).
	Owner() string
	// AskApproval has the conversation's running worker open the approval
	// card a (bridges/features/cards) and returns once it shows, or could not be
	// shown (a refusal wrapping ErrRefused); it does not wait for the
	// decision. ErrNoWorker: the conversation's worker is not running.
	AskApproval(ctx context.Context, a Approval) error
}

// ErrNoWorker: the conversation has no running worker to ask.
var ErrNoWorker = errors.New("the conversation is not running")

// ErrRefused wraps a refusal the agent should read as a tool error (a bad
// argument, a schedule it may not have), as opposed to a failure.
var ErrRefused = errors.New("refused")

// NewRefusal is a feature's own refusal sentinel with its own text (e.g.
// "schedule refused"): an error wrapping it is a refusal (errors.Is it
// ErrRefused), and ErrorText strips its text as it strips ErrRefused's.
func NewRefusal(text string) error { return &refusal{text} }

// refusal is a sentinel made by NewRefusal.
type refusal struct{ text string }

func (r *refusal) Error() string        { return r.text }
func (r *refusal) Is(target error) bool { return target == ErrRefused }

// IsRefusal reports whether err is a refusal, not a failure.
func IsRefusal(err error) bool { return errors.Is(err, ErrRefused) }

// ErrorText is what the model reads for a failed call: the refusal's
// reason without its sentinel (ErrRefused, a NewRefusal one, or one of
// sentinels), or the failure message.
func ErrorText(err error, sentinels ...error) string {
	msg := err.Error()
	own := []error{ErrRefused}
	var r *refusal
	if errors.As(err, &r) {
		own = append(own, r)
	}
	for _, sentinel := range append(own, sentinels...) {
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

// Tool is one of the bridge's agent tools as the core sees it: its name
// and how a call of it reads on the tool line.
type Tool struct {
	Name string
	// Detail is what a call with input in acts on ("" for nothing to
	// show); nil shows nothing.
	Detail func(in map[string]any, workdir string) string
}

// Tools are the bridge's agent tools, built-in and registered, in the
// order the agent sees them (bridges/features/agenttools.Tools.List).
type Tools []Tool

// Allowed are the --allowed-tools entries that let the CLI call the
// bridge's tools without asking, in the order the agent sees them.
func (ts Tools) Allowed() []string {
	out := make([]string, 0, len(ts))
	for _, t := range ts {
		out = append(out, Qualified(t.Name))
	}
	return out
}

// Detail is the tool line of a call of the bridge's own tools: the short
// name and what it acts on (ok false for other tools; an own tool ts does
// not know shows its name only).
func (ts Tools) Detail(name string, in map[string]any, workdir string) (short, detail string, ok bool) {
	if !IsOwn(name) {
		return "", "", false
	}
	short = strings.TrimPrefix(name, "mcp__"+ServerName+"__")
	for _, t := range ts {
		if t.Name == short && t.Detail != nil {
			return short, t.Detail(in, workdir), true
		}
	}
	return short, "", true
}

// Line is the compact one-line summary of a tool call u
// (render.ToolLine), the bridge's own tools shown by their short names.
func (ts Tools) Line(u streamjson.ToolUse, workdir string) string {
	if name, d, ok := ts.Detail(u.Name, render.InputMap(u.Input), workdir); ok {
		return render.ToolLineOf(u, name, d)
	}
	return render.ToolLine(u, workdir)
}
