package core

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/agentbridge/agentbridge/agent"
	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/render"
	"github.com/agentbridge/agentbridge/bridges/schedule/schedreq"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/store"
)

// ToolServer is the name of the bridge's MCP server as the agent sees it:
// its tools are mcp__bridge__send_message and so on.
const ToolServer = "bridge"

// The bridge's agent tools (served by bridges/agenttools).
const (
	ToolSendMessage    = "send_message"
	ToolSendFile       = "send_file"
	ToolSchedule       = "schedule"
	ToolListSchedules  = "list_schedules"
	ToolCancelSchedule = "cancel_schedule"
)

// agentToolNames lists the tools in the order the agent sees them.
var agentToolNames = []string{ToolSendMessage, ToolSendFile, ToolSchedule, ToolListSchedules, ToolCancelSchedule}

// AgentTools builds the bridge's MCP server for one conversation's agent
// process (bridges/agenttools). The server must serve the tools named by
// the Tool* constants, act on conv only, and may implement WorkdirMover.
type AgentTools func(conv ToolConversation) agent.MCPServer

// ToolConversation is what the agent's tools may do in the one
// conversation whose agent process they serve: the narrow face the core
// offers them instead of *Core. It is safe for concurrent use (tool calls
// run on the agent session's goroutines, never on the worker). Errors a
// tool should report as a refusal (the agent asked for something it may
// not have) wrap ErrToolRefused.
type ToolConversation interface {
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

// ErrToolRefused wraps a refusal the agent should read as a tool error
// (a bad argument, a schedule it may not have), as opposed to a failure.
var ErrToolRefused = errors.New("refused")

// IsToolRefusal reports whether err is a refusal, not a failure.
func IsToolRefusal(err error) bool {
	return errors.Is(err, ErrToolRefused) || errors.Is(err, schedreq.ErrRefused)
}

// ToolErrorText is what the model reads for a failed call: the refusal's
// reason without its sentinel, or the failure message.
func ToolErrorText(err error, sentinels ...error) string {
	msg := err.Error()
	for _, sentinel := range append([]error{ErrToolRefused, schedreq.ErrRefused}, sentinels...) {
		msg = strings.TrimSuffix(strings.TrimPrefix(msg, sentinel.Error()+": "), ": "+sentinel.Error())
	}
	return msg
}

// ByteSize is n in B, KB or MB, for messages.
func ByteSize(n int64) string { return render.ByteSize(n) }

// CodeSnippet is the text of a file shown inline: its name and a code
// block of body in lang.
func CodeSnippet(name, lang, body string) string {
	return "📄 " + codeSpan(name) + "\n" + codeBlock(lang, body)
}

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

// withAgentTools gives the agent process of opts the bridge's tools: the
// MCP server (for opts.Workdir) and the --allowed-tools entries that let
// the CLI call them without asking (they act on this conversation only).
// A profile's disallowed_tools still wins over them in the CLI. Without
// CoreOptions.Tools the agent gets none.
func (cv *conversation) withAgentTools(opts *agent.Options) {
	if cv.core.opts.Tools == nil {
		return
	}
	tc := &toolConv{
		core: cv.core, key: cv.key, convID: cv.id, owner: cv.row.OwnerUserID, agent: cv.profile.Name, bot: cv.bot.Name,
		policy:   schedreq.Policy(cv.profile),
		platform: cv.platform, limits: cv.limits, budget: cv.budget, workdir: opts.Workdir,
		hidden: secretPaths(cv.core.cfg()), log: cv.log.With("mcp_server", ToolServer),
	}
	opts.MCPServers = map[string]agent.MCPServer{ToolServer: cv.core.opts.Tools(tc)}
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

// toolConv is the core's ToolConversation: copies of the conversation's
// fixed facts, and the core's schedule requests and post budget.
type toolConv struct {
	core     *Core
	key      bridges.ConversationKey
	convID   string
	owner    string // the conversation's owner: creator of agent schedules under agent_schedules: allow
	agent    string // the conversation's agent profile
	policy   string // the profile's agent_schedules (schedreq.Policy)
	bot      string
	platform bridges.Platform
	limits   bridges.Limits
	budget   *budget
	workdir  string
	hidden   []string
	log      *slog.Logger
}

var _ ToolConversation = (*toolConv)(nil)

func (t *toolConv) Key() bridges.ConversationKey { return t.key }
func (t *toolConv) Log() *slog.Logger            { return t.log }
func (t *toolConv) Workdir() string              { return t.workdir }
func (t *toolConv) Hidden() []string             { return t.hidden }

func (t *toolConv) UploadLimit() (int64, bool) {
	_, ok := t.platform.(bridges.FileUploader)
	return t.limits.MaxUploadBytes, ok
}

func (t *toolConv) ToolCalled(tool, outcome string) {
	t.core.opts.Metrics.ToolCall(t.bot, tool, outcome)
}

// post posts m into the conversation, within the channel's post budget.
func (t *toolConv) post(ctx context.Context, m bridges.Message) (bridges.MessageRef, error) {
	t.budget.take(t.core.clock.Now(), t.limits.EditInterval, true)
	return t.platform.Post(ctx, t.key, m)
}

func (t *toolConv) PostText(ctx context.Context, text string) (int, error) {
	max := t.limits.MaxMessageRunes
	if max <= 0 {
		max = render.DefaultMaxRunes
	}
	parts := render.Chunks(text, max)
	for i, c := range parts {
		if _, err := t.post(ctx, bridges.Message{Text: c}); err != nil {
			return i, fmt.Errorf("post part %d of %d: %w", i+1, len(parts), err)
		}
	}
	return len(parts), nil
}

func (t *toolConv) Upload(ctx context.Context, u bridges.Upload) error {
	up, ok := t.platform.(bridges.FileUploader)
	if !ok {
		return fmt.Errorf("%w: this chat cannot take attachments", ErrToolRefused)
	}
	t.budget.take(t.core.clock.Now(), t.limits.EditInterval, true)
	if _, err := up.UploadFile(ctx, t.key, u); err != nil {
		return fmt.Errorf("upload %s: %w", u.Name, err)
	}
	return nil
}

func (t *toolConv) ScheduleNote() string {
	return schedreq.ToolNote(t.policy)
}

func (t *toolConv) RequestSchedule(ctx context.Context, a ScheduleAsk) (string, error) {
	r := schedreq.Request{
		Source: store.ScheduleFromAgent, Name: a.Name, Cron: a.Cron, TZ: a.TZ,
		Prompt: a.Prompt, Key: t.key, ConvID: t.convID, Agent: t.agent,
	}
	switch t.policy {
	case config.AgentSchedulesOff:
		return "", fmt.Errorf("%w: schedules made by the agent are turned off for this agent (agent_schedules: off); "+
			"a person can add one with %sschedule add", ErrToolRefused, bridges.CommandPrefix)
	case config.AgentSchedulesAsk:
		if err := t.askSchedule(ctx, r); err != nil {
			return "", err
		}
		return schedreq.AskAnswer, nil
	}
	r.CreatedBy = t.owner // agent_schedules: allow
	sc, err := t.core.addSchedule(ctx, r)
	if err != nil {
		return "", err
	}
	t.noticeSchedule(ctx, "🗓 The agent scheduled "+schedreq.Line(sc, t.core.clock.Now(), t.key))
	return fmt.Sprintf("Scheduled as #%d: %s", sc.ID, schedreq.Line(sc, t.core.clock.Now(), t.key)), nil
}

// noticeSchedule tells the conversation what the agent did to its
// schedules: people must see what will run in their name.
func (t *toolConv) noticeSchedule(ctx context.Context, text string) {
	if _, err := t.post(ctx, bridges.Message{Text: text}); err != nil {
		t.log.Warn("post schedule notice", "err", err)
	}
}

func (t *toolConv) ListSchedules(ctx context.Context) (string, error) {
	all, err := t.core.st.SchedulesOfConversation(ctx, t.convID)
	if err != nil {
		return "", fmt.Errorf("list schedules: %w", err)
	}
	if len(all) == 0 {
		return "This conversation has no schedules.", nil
	}
	lines := make([]string, 0, len(all))
	for _, sc := range all {
		lines = append(lines, schedreq.Line(sc, t.core.clock.Now(), t.key)+"\n  prompt: "+oneLine(sc.Prompt, 300))
	}
	return strings.Join(lines, "\n"), nil
}

func (t *toolConv) CancelSchedule(ctx context.Context, id int64) (string, error) {
	sc, err := t.core.st.ScheduleByID(ctx, id)
	if errors.Is(err, store.ErrNotFound) || err == nil && (!sc.Active() || sc.ConversationID != t.convID) {
		return "", fmt.Errorf("%w: this conversation has no schedule #%d (see list_schedules)", ErrToolRefused, id)
	}
	if err != nil {
		return "", fmt.Errorf("cancel schedule: %w", err)
	}
	if err := t.core.removeSchedule(ctx, sc, "agent:"+t.convID); err != nil {
		return "", err
	}
	t.noticeSchedule(ctx, fmt.Sprintf("🗓 The agent cancelled schedule #%d (%s).", sc.ID, schedreq.Name(sc.Name)))
	return fmt.Sprintf("Schedule #%d cancelled.", sc.ID), nil
}
