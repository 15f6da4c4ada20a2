// Package agenttools is the bridge's MCP server for the agent: the
// built-in tools send_message and send_file, and the tools a feature
// registers (Tool: bridges/features/schedule's schedule, list_schedules and
// cancel_schedule), served in-process to one conversation's agent process.
// It acts through the narrow Conversation the core hands it, never through
// *core.Core, and never imports the core (the core imports this package's
// toolconv for the seam); bridges/app/assemble wires it in as
// core.CoreOptions.Tools = agenttools.New(feature tools...).
package agenttools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/agentbridge/agentbridge/agent"
	"github.com/agentbridge/agentbridge/bridges/core/render"
	"github.com/agentbridge/agentbridge/bridges/core/toolconv"
)

// toolCallTimeout bounds one tool call (an upload of a large file included).
const toolCallTimeout = 2 * time.Minute

// Tool is an agent tool a feature registers (New): it acts, like the
// built-in ones, on the one conversation whose agent process it serves.
type Tool struct {
	// Name is the tool's name (the agent sees mcp__bridge__NAME).
	Name string
	// Define is the tool's MCP definition for conv's agent process (its
	// description may depend on the conversation's profile).
	Define func(conv toolconv.Conversation) mcp.Tool
	// Handle carries a call out and returns the tool's answer; errors
	// wrapping toolconv.ErrRefused are refusals.
	Handle func(ctx context.Context, conv toolconv.Conversation, req mcp.CallToolRequest) (string, error)
	// Detail is what a call acts on, for its tool line (toolconv.Tool).
	Detail func(in map[string]any, workdir string) string
}

// Tools are the bridge's agent tools: the built-in ones, then the ones
// features registered. *Tools is the core's AgentTools.
type Tools struct{ extra []Tool }

// New is the built-in tools (send_message, send_file) followed by extra,
// in that order.
func New(extra ...Tool) *Tools { return &Tools{extra: extra} }

// List is the tools' names and tool lines, in the order the agent sees
// them (worker.AgentTools).
func (ts *Tools) List() toolconv.Tools {
	out := toolconv.Tools{
		{Name: toolconv.ToolSendMessage, Detail: func(in map[string]any, _ string) string {
			return render.FirstLine(render.Str(in, "text"))
		}},
		{Name: toolconv.ToolSendFile, Detail: func(in map[string]any, workdir string) string {
			return render.RelPath(render.Str(in, "path"), workdir)
		}},
	}
	for _, t := range ts.extra {
		out = append(out, toolconv.Tool{Name: t.Name, Detail: t.Detail})
	}
	return out
}

// Server is the bridge's MCP server for one conversation's agent process
// (served in-process over the CLI's stdin/stdout, see agent.MCPServer).
// Every tool acts on that conversation only, so the CLI runs them without
// asking (--allowed-tools). It is safe for concurrent use, except MoveTo,
// which runs before the first call.
type Server struct {
	conv    toolconv.Conversation
	workdir string
	hidden  []string // paths send_file refuses (agents.SecretPaths)
	log     *slog.Logger
	srv     *server.MCPServer
}

// Server is also a agents.WorkdirMover and *Tools a worker.AgentTools
// (guarded in tools_test.go: this package does not import the core).
var _ agent.MCPServer = (*Server)(nil)

// Server builds the tool server for conv's next agent process
// (worker.AgentTools).
func (ts *Tools) Server(conv toolconv.Conversation) agent.MCPServer {
	t := &Server{conv: conv, workdir: conv.Workdir(), hidden: conv.Hidden(), log: conv.Log()}
	t.srv = server.NewMCPServer("agentbridge", "1", server.WithToolCapabilities(false), server.WithRecovery(),
		server.WithInstructions("Tools of the chat bridge you are reached through. They act on the current chat conversation only."))
	add := func(tool mcp.Tool, h func(context.Context, mcp.CallToolRequest) (string, error)) {
		t.srv.AddTool(tool, t.instrument(tool.Name, h))
	}
	add(mcp.NewTool(toolconv.ToolSendMessage,
		mcp.WithDescription("Post a message into this chat conversation, outside your normal reply. Use it to tell "+
			"the people in the conversation something when you are not answering them, for example that a background job you "+
			"started has finished. Markdown is allowed."),
		mcp.WithString("text", mcp.Required(), mcp.Description("The message (Markdown).")),
		mcp.WithDestructiveHintAnnotation(false), mcp.WithOpenWorldHintAnnotation(false),
	), t.sendMessage)
	add(mcp.NewTool(toolconv.ToolSendFile,
		mcp.WithDescription(fmt.Sprintf("Post a file from your working directory into this chat conversation, as an attachment "+
			"where the chat takes files (at most %s), else as a text snippet (text files up to %s).",
			render.ByteSize(t.maxUpload()), render.ByteSize(maxSnippetBytes))),
		mcp.WithString("path", mcp.Required(), mcp.Description("Path of the file, relative to the working directory or absolute inside it.")),
		mcp.WithString("comment", mcp.Description("Optional message shown with the file (Markdown).")),
		mcp.WithDestructiveHintAnnotation(false), mcp.WithOpenWorldHintAnnotation(false),
	), t.sendFile)
	for _, x := range ts.extra {
		add(x.Define(conv), func(ctx context.Context, req mcp.CallToolRequest) (string, error) { return x.Handle(ctx, conv, req) })
	}
	return t
}

// HandleMCP implements agent.MCPServer.
func (t *Server) HandleMCP(ctx context.Context, msg json.RawMessage) json.RawMessage {
	resp := t.srv.HandleMessage(ctx, msg)
	if resp == nil {
		return nil
	}
	b, err := json.Marshal(resp)
	if err != nil {
		t.log.Error("encode MCP response", "err", err)
		return nil
	}
	return b
}

// instrument wraps a tool: it bounds the call, logs it, counts it and turns
// an error into a tool error result the model can read.
func (t *Server) instrument(tool string, h func(context.Context, mcp.CallToolRequest) (string, error)) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		ctx, cancel := context.WithTimeout(ctx, toolCallTimeout)
		defer cancel()
		start := time.Now()
		text, err := h(ctx, req)
		outcome := "ok"
		switch {
		case toolconv.IsRefusal(err) || errors.Is(err, errFileRefused):
			outcome = "refused"
		case err != nil:
			outcome = "error"
		}
		t.conv.ToolCalled(tool, outcome)
		level := slog.LevelInfo
		if outcome == "error" {
			level = slog.LevelWarn
		}
		t.log.Log(ctx, level, "agent tool call", "tool", tool, "outcome", outcome, "err", err, "duration", time.Since(start))
		if err != nil {
			return mcp.NewToolResultError(toolconv.ErrorText(err, errFileRefused)), nil
		}
		return mcp.NewToolResultText(text), nil
	}
}

func (t *Server) sendMessage(ctx context.Context, req mcp.CallToolRequest) (string, error) {
	text, err := req.RequireString("text")
	if err != nil || strings.TrimSpace(text) == "" {
		return "", fmt.Errorf("%w: text is required", toolconv.ErrRefused)
	}
	if _, err := t.conv.PostText(ctx, text); err != nil {
		return "", err
	}
	return "Posted in the conversation.", nil
}
