package core

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
	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/store"
)

// ToolServer is the name of the bridge's MCP server as the agent sees it:
// its tools are mcp__bridge__send_message and so on.
const ToolServer = "bridge"

// The bridge's agent tools.
const (
	toolSendMessage    = "send_message"
	toolSendFile       = "send_file"
	toolSchedule       = "schedule"
	toolListSchedules  = "list_schedules"
	toolCancelSchedule = "cancel_schedule"
)

// agentToolNames lists the tools in the order the agent sees them.
var agentToolNames = []string{toolSendMessage, toolSendFile, toolSchedule, toolListSchedules, toolCancelSchedule}

// qualifiedTool is the name the CLI gives tool of the bridge's server.
func qualifiedTool(tool string) string { return "mcp__" + ToolServer + "__" + tool }

// isAgentTool reports whether a CLI tool name is one of the bridge's own.
func isAgentTool(name string) bool { return strings.HasPrefix(name, "mcp__"+ToolServer+"__") }

// agentToolDetail is the tool line of a call of the bridge's own tools:
// the short name and what it acts on (ok false for other tools).
func agentToolDetail(name string, in map[string]any, workdir string) (string, string, bool) {
	if !isAgentTool(name) {
		return "", "", false
	}
	short := strings.TrimPrefix(name, "mcp__"+ToolServer+"__")
	switch short {
	case toolSendMessage:
		return short, firstLine(str(in, "text")), true
	case toolSendFile:
		return short, relPath(str(in, "path"), workdir), true
	case toolSchedule:
		return short, str(in, "cron") + " — " + firstLine(str(in, "prompt")), true
	case toolCancelSchedule:
		if id, ok := in["id"].(float64); ok {
			return short, fmt.Sprintf("#%d", int64(id)), true
		}
	}
	return short, "", true
}

// toolCallTimeout bounds one tool call (an upload of a large file included).
const toolCallTimeout = 2 * time.Minute

// agentTools is the bridge's MCP server for one conversation's agent
// process (served in-process over the CLI's stdin/stdout, see
// agent.MCPServer). Every tool acts on that conversation only, so the CLI
// runs them without asking (--allowed-tools). It holds copies of the
// conversation's fixed facts and is safe for concurrent use: tool calls run
// on the agent session's goroutines, never on the conversation's worker.
type agentTools struct {
	core     *Core
	key      bridges.ConversationKey
	convID   string
	owner    string // the conversation's owner: creator of agent schedules under agent_schedules: allow
	agent    string // the conversation's agent profile
	policy   string // the profile's agent_schedules (agentSchedulePolicy)
	bot      string
	platform bridges.Platform
	limits   bridges.Limits
	budget   *budget
	workdir  string
	hidden   []string // paths send_file refuses (secretPaths)
	log      *slog.Logger
	srv      *server.MCPServer
}

var _ agent.MCPServer = (*agentTools)(nil)

// newAgentTools builds the tool server for cv's next agent process, whose
// working directory is workdir.
func (cv *conversation) newAgentTools(workdir string) *agentTools {
	t := &agentTools{
		core: cv.core, key: cv.key, convID: cv.id, owner: cv.row.OwnerUserID, agent: cv.profile.Name, bot: cv.bot.Name,
		policy:   agentSchedulePolicy(cv.profile),
		platform: cv.platform, limits: cv.limits, budget: cv.budget, workdir: workdir,
		hidden: secretPaths(cv.core.cfg), log: cv.log.With("mcp_server", ToolServer),
	}
	t.srv = server.NewMCPServer("agentbridge", "1", server.WithToolCapabilities(false), server.WithRecovery(),
		server.WithInstructions("Tools of the chat bridge you are reached through. They act on the current chat conversation only."))
	add := func(tool mcp.Tool, h func(context.Context, mcp.CallToolRequest) (string, error)) {
		t.srv.AddTool(tool, t.instrument(tool.Name, h))
	}
	add(mcp.NewTool(toolSendMessage,
		mcp.WithDescription("Post a message into this chat conversation, outside your normal reply. Use it to tell "+
			"the people in the conversation something when you are not answering them, for example that a background job you "+
			"started has finished. Markdown is allowed."),
		mcp.WithString("text", mcp.Required(), mcp.Description("The message (Markdown).")),
		mcp.WithDestructiveHintAnnotation(false), mcp.WithOpenWorldHintAnnotation(false),
	), t.sendMessage)
	add(mcp.NewTool(toolSendFile,
		mcp.WithDescription(fmt.Sprintf("Post a file from your working directory into this chat conversation, as an attachment "+
			"where the chat takes files (at most %s), else as a text snippet (text files up to %s).",
			byteSize(t.maxUpload()), byteSize(maxSnippetBytes))),
		mcp.WithString("path", mcp.Required(), mcp.Description("Path of the file, relative to the working directory or absolute inside it.")),
		mcp.WithString("comment", mcp.Description("Optional message shown with the file (Markdown).")),
		mcp.WithDestructiveHintAnnotation(false), mcp.WithOpenWorldHintAnnotation(false),
	), t.sendFile)
	add(mcp.NewTool(toolSchedule,
		mcp.WithDescription(fmt.Sprintf("Schedule a prompt to be sent to you in this conversation on a cron schedule, "+
			"e.g. to check on something every morning. Each run is posted as \"%sNAME\". At most one run every %s and %d "+
			"schedules per conversation.%s", scheduleHeader, gapText(minScheduleGap), maxSchedulesPerConversation, schedulePolicyNote(t.policy))),
		mcp.WithString("cron", mcp.Required(), mcp.Description(`Five-field cron expression: minute hour day-of-month month day-of-week, e.g. "0 9 * * 1-5"; or @daily, @hourly.`)),
		mcp.WithString("prompt", mcp.Required(), mcp.Description("What you will be asked at each run.")),
		mcp.WithString("tz", mcp.Description("IANA time zone of the cron expression, e.g. Europe/Berlin; default the bridge's local time.")),
		mcp.WithString("name", mcp.Description("Short name shown with each run; default the start of the prompt.")),
		mcp.WithOpenWorldHintAnnotation(false),
	), t.schedule)
	add(mcp.NewTool(toolListSchedules,
		mcp.WithDescription("List the schedules of this conversation (made in the chat or by you) with their ids and next runs."),
		mcp.WithReadOnlyHintAnnotation(true), mcp.WithOpenWorldHintAnnotation(false),
	), t.listSchedules)
	add(mcp.NewTool(toolCancelSchedule,
		mcp.WithDescription("Cancel a schedule of this conversation by its id (see list_schedules)."),
		mcp.WithNumber("id", mcp.Required(), mcp.Description("The schedule's id.")),
		mcp.WithDestructiveHintAnnotation(true), mcp.WithOpenWorldHintAnnotation(false),
	), t.cancelSchedule)
	return t
}

// HandleMCP implements agent.MCPServer.
func (t *agentTools) HandleMCP(ctx context.Context, msg json.RawMessage) json.RawMessage {
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

// errToolRefused wraps a refusal the agent should read as a tool error
// (a bad argument, a path it may not send), as opposed to a failure.
var errToolRefused = errors.New("refused")

// instrument wraps a tool: it bounds the call, logs it, counts it and turns
// an error into a tool error result the model can read.
func (t *agentTools) instrument(tool string, h func(context.Context, mcp.CallToolRequest) (string, error)) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		ctx, cancel := context.WithTimeout(ctx, toolCallTimeout)
		defer cancel()
		start := time.Now()
		text, err := h(ctx, req)
		outcome := "ok"
		switch {
		case errors.Is(err, errToolRefused) || errors.Is(err, errFileRefused) || errors.Is(err, errScheduleRefused):
			outcome = "refused"
		case err != nil:
			outcome = "error"
		}
		t.core.opts.Metrics.toolCall(t.bot, tool, outcome)
		level := slog.LevelInfo
		if outcome == "error" {
			level = slog.LevelWarn
		}
		t.log.Log(ctx, level, "agent tool call", "tool", tool, "outcome", outcome, "err", err, "duration", time.Since(start))
		if err != nil {
			return mcp.NewToolResultError(toolErrorText(err)), nil
		}
		return mcp.NewToolResultText(text), nil
	}
}

// toolErrorText is what the model reads for a failed call: the refusal's
// reason, or a short failure message.
func toolErrorText(err error) string {
	msg := err.Error()
	for _, sentinel := range []error{errToolRefused, errFileRefused, errScheduleRefused} {
		msg = strings.TrimSuffix(strings.TrimPrefix(msg, sentinel.Error()+": "), ": "+sentinel.Error())
	}
	return msg
}

// post posts m into the conversation, within the channel's post budget.
func (t *agentTools) post(ctx context.Context, m bridges.Message) (bridges.MessageRef, error) {
	t.budget.take(t.core.clock.Now(), t.limits.EditInterval, true)
	return t.platform.Post(ctx, t.key, m)
}

func (t *agentTools) sendMessage(ctx context.Context, req mcp.CallToolRequest) (string, error) {
	text, err := req.RequireString("text")
	if err != nil || strings.TrimSpace(text) == "" {
		return "", fmt.Errorf("%w: text is required", errToolRefused)
	}
	parts := chunks(text, t.maxRunes())
	for i, c := range parts {
		if _, err := t.post(ctx, bridges.Message{Text: c}); err != nil {
			return "", fmt.Errorf("post part %d of %d: %w", i+1, len(parts), err)
		}
	}
	return "Posted in the conversation.", nil
}

func (t *agentTools) maxRunes() int {
	if t.limits.MaxMessageRunes > 0 {
		return t.limits.MaxMessageRunes
	}
	return defaultMaxRunes
}

func (t *agentTools) schedule(ctx context.Context, req mcp.CallToolRequest) (string, error) {
	cron, err := req.RequireString("cron")
	if err != nil {
		return "", fmt.Errorf("%w: cron is required", errToolRefused)
	}
	prompt, err := req.RequireString("prompt")
	if err != nil {
		return "", fmt.Errorf("%w: prompt is required", errToolRefused)
	}
	r := scheduleRequest{
		source: store.ScheduleFromAgent, name: req.GetString("name", ""), cron: cron, tz: req.GetString("tz", ""),
		prompt: prompt, key: t.key, convID: t.convID, agent: t.agent,
	}
	switch t.policy {
	case config.AgentSchedulesOff:
		return "", fmt.Errorf("%w: schedules made by the agent are turned off for this agent (agent_schedules: off); "+
			"a person can add one with %sschedule add", errToolRefused, bridges.CommandPrefix)
	case config.AgentSchedulesAsk:
		if err := t.askSchedule(ctx, r); err != nil {
			return "", err
		}
		return scheduleAsk, nil
	}
	r.createdBy = t.owner // agent_schedules: allow
	sc, err := t.core.addSchedule(ctx, r)
	if err != nil {
		return "", err
	}
	t.noticeSchedule(ctx, "🗓 The agent scheduled "+scheduleLine(sc, t.core.clock.Now(), t.key))
	return fmt.Sprintf("Scheduled as #%d: %s", sc.ID, scheduleLine(sc, t.core.clock.Now(), t.key)), nil
}

// schedulePolicyNote tells the agent, in the schedule tool's description,
// what agent_schedules does with its requests.
func schedulePolicyNote(policy string) string {
	switch policy {
	case config.AgentSchedulesOff:
		return " Turned off for you: every call is refused."
	case config.AgentSchedulesAllow:
		return ""
	}
	return " A person must approve each schedule first: the call shows them a card and returns; the schedule exists only once approved."
}

// noticeSchedule tells the conversation what the agent did to its
// schedules: people must see what will run in their name.
func (t *agentTools) noticeSchedule(ctx context.Context, text string) {
	if _, err := t.post(ctx, bridges.Message{Text: text}); err != nil {
		t.log.Warn("post schedule notice", "err", err)
	}
}

func (t *agentTools) listSchedules(ctx context.Context, _ mcp.CallToolRequest) (string, error) {
	all, err := t.core.st.SchedulesOfConversation(ctx, t.convID)
	if err != nil {
		return "", fmt.Errorf("list schedules: %w", err)
	}
	if len(all) == 0 {
		return "This conversation has no schedules.", nil
	}
	lines := make([]string, 0, len(all))
	for _, sc := range all {
		lines = append(lines, scheduleLine(sc, t.core.clock.Now(), t.key)+"\n  prompt: "+oneLine(sc.Prompt, 300))
	}
	return strings.Join(lines, "\n"), nil
}

func (t *agentTools) cancelSchedule(ctx context.Context, req mcp.CallToolRequest) (string, error) {
	id, err := req.RequireFloat("id")
	if err != nil || id != float64(int64(id)) {
		return "", fmt.Errorf("%w: id must be a schedule's number", errToolRefused)
	}
	sc, err := t.core.st.ScheduleByID(ctx, int64(id))
	if errors.Is(err, store.ErrNotFound) || err == nil && (!sc.Active() || sc.ConversationID != t.convID) {
		return "", fmt.Errorf("%w: this conversation has no schedule #%d (see list_schedules)", errToolRefused, int64(id))
	}
	if err != nil {
		return "", fmt.Errorf("cancel schedule: %w", err)
	}
	if err := t.core.removeSchedule(ctx, sc, "agent:"+t.convID); err != nil {
		return "", err
	}
	t.noticeSchedule(ctx, fmt.Sprintf("🗓 The agent cancelled schedule #%d (%s).", sc.ID, oneLine(sc.Name, maxScheduleNameRunes)))
	return fmt.Sprintf("Schedule #%d cancelled.", sc.ID), nil
}

// withAgentTools gives the agent process of opts the bridge's tools: the
// MCP server (for opts.Workdir) and the --allowed-tools entries that let
// the CLI call them without asking (they act on this conversation only).
// A profile's disallowed_tools still wins over them in the CLI.
func (cv *conversation) withAgentTools(opts *agent.Options) {
	opts.MCPServers = map[string]agent.MCPServer{ToolServer: cv.newAgentTools(opts.Workdir)}
	opts.AllowedTools = append(opts.AllowedTools, agentToolsAllowed()...)
}

// agentToolsAllowed are the --allowed-tools entries that let the CLI call
// the bridge's tools without asking.
func agentToolsAllowed() []string {
	out := make([]string, 0, len(agentToolNames))
	for _, n := range agentToolNames {
		out = append(out, qualifiedTool(n))
	}
	return out
}
