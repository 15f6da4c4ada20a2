// Package agenttools is the bridge's MCP server for the agent: the tools
// send_message, send_file, schedule, list_schedules and cancel_schedule,
// served in-process to one conversation's agent process. It acts through
// the narrow Conversation the core hands it, never through *core.Core, and
// never imports the core (the core imports this package for the seam);
// bridges/app/assemble wires it in as core.CoreOptions.Tools = agenttools.New.
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
	"github.com/agentbridge/agentbridge/bridges/agenttools/toolconv"
	"github.com/agentbridge/agentbridge/bridges/render"
)

// toolCallTimeout bounds one tool call (an upload of a large file included).
const toolCallTimeout = 2 * time.Minute

// Server is the bridge's MCP server for one conversation's agent process
// (served in-process over the CLI's stdin/stdout, see agent.MCPServer).
// Every tool acts on that conversation only, so the CLI runs them without
// asking (--allowed-tools). It is safe for concurrent use, except MoveTo,
// which runs before the first call.
type Server struct {
	conv    toolconv.Conversation
	workdir string
	hidden  []string // paths send_file refuses (core.SecretPaths)
	log     *slog.Logger
	srv     *server.MCPServer
}

// Server is also a core.WorkdirMover and New a core.AgentTools (guarded
// in tools_test.go: this package does not import the core).
var _ agent.MCPServer = (*Server)(nil)

// New builds the tool server for conv's next agent process
// (core.AgentTools).
func New(conv toolconv.Conversation) agent.MCPServer {
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
	add(mcp.NewTool(toolconv.ToolSchedule,
		mcp.WithDescription("Schedule a prompt to be sent to you in this conversation on a cron schedule, "+
			"e.g. to check on something every morning. "+conv.ScheduleNote()),
		mcp.WithString("cron", mcp.Required(), mcp.Description(`Five-field cron expression: minute hour day-of-month month day-of-week, e.g. "0 9 * * 1-5"; or @daily, @hourly.`)),
		mcp.WithString("prompt", mcp.Required(), mcp.Description("What you will be asked at each run.")),
		mcp.WithString("tz", mcp.Description("IANA time zone of the cron expression, e.g. Europe/Berlin; default the bridge's local time.")),
		mcp.WithString("name", mcp.Description("Short name shown with each run; default the start of the prompt.")),
		mcp.WithOpenWorldHintAnnotation(false),
	), t.schedule)
	add(mcp.NewTool(toolconv.ToolListSchedules,
		mcp.WithDescription("List the schedules of this conversation (made in the chat or by you) with their ids and next runs."),
		mcp.WithReadOnlyHintAnnotation(true), mcp.WithOpenWorldHintAnnotation(false),
	), t.listSchedules)
	add(mcp.NewTool(toolconv.ToolCancelSchedule,
		mcp.WithDescription("Cancel a schedule of this conversation by its id (see list_schedules)."),
		mcp.WithNumber("id", mcp.Required(), mcp.Description("The schedule's id.")),
		mcp.WithDestructiveHintAnnotation(true), mcp.WithOpenWorldHintAnnotation(false),
	), t.cancelSchedule)
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

func (t *Server) schedule(ctx context.Context, req mcp.CallToolRequest) (string, error) {
	cron, err := req.RequireString("cron")
	if err != nil {
		return "", fmt.Errorf("%w: cron is required", toolconv.ErrRefused)
	}
	prompt, err := req.RequireString("prompt")
	if err != nil {
		return "", fmt.Errorf("%w: prompt is required", toolconv.ErrRefused)
	}
	return t.conv.RequestSchedule(ctx, toolconv.ScheduleAsk{Name: req.GetString("name", ""), Cron: cron, TZ: req.GetString("tz", ""), Prompt: prompt})
}

func (t *Server) listSchedules(ctx context.Context, _ mcp.CallToolRequest) (string, error) {
	return t.conv.ListSchedules(ctx)
}

func (t *Server) cancelSchedule(ctx context.Context, req mcp.CallToolRequest) (string, error) {
	id, err := req.RequireFloat("id")
	if err != nil || id != float64(int64(id)) {
		return "", fmt.Errorf("%w: id must be a schedule's number", toolconv.ErrRefused)
	}
	return t.conv.CancelSchedule(ctx, int64(id))
}
