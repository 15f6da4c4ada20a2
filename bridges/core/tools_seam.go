package core

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/agentbridge/agentbridge/agent"
	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/agenttools/toolconv"
	"github.com/agentbridge/agentbridge/bridges/delivery"
	"github.com/agentbridge/agentbridge/bridges/render"
	"github.com/agentbridge/agentbridge/bridges/schedule/schedreq"
	"github.com/agentbridge/agentbridge/config/profile"
	"github.com/agentbridge/agentbridge/internal/textcut"
	"github.com/agentbridge/agentbridge/store"
)

// ToolServer is the name of the bridge's MCP server as the agent sees it.
const ToolServer = toolconv.ServerName

// AgentTools builds the bridge's MCP server for one conversation's agent
// process (bridges/agenttools.New). The server must serve the tools
// agenttools names, act on conv only, and may implement WorkdirMover.
type AgentTools func(conv toolconv.Conversation) agent.MCPServer

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
	opts.AllowedTools = append(opts.AllowedTools, toolconv.Allowed()...)
}

// toolConv is the core's toolconv.Conversation: copies of the conversation's
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
	budget   *delivery.Budget
	workdir  string
	hidden   []string
	log      *slog.Logger
}

var _ toolconv.Conversation = (*toolConv)(nil)

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
	t.budget.Take(t.core.clock.Now(), t.limits.EditInterval, true)
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
		return fmt.Errorf("%w: this chat cannot take attachments", toolconv.ErrRefused)
	}
	t.budget.Take(t.core.clock.Now(), t.limits.EditInterval, true)
	if _, err := up.UploadFile(ctx, t.key, u); err != nil {
		return fmt.Errorf("upload %s: %w", u.Name, err)
	}
	return nil
}

func (t *toolConv) ScheduleNote() string {
	return schedreq.ToolNote(t.policy)
}

func (t *toolConv) RequestSchedule(ctx context.Context, a toolconv.ScheduleAsk) (string, error) {
	r := schedreq.Request{
		Source: store.ScheduleFromAgent, Name: a.Name, Cron: a.Cron, TZ: a.TZ,
		Prompt: a.Prompt, Key: t.key, ConvID: t.convID, Agent: t.agent,
	}
	switch t.policy {
	case profile.AgentSchedulesOff:
		return "", fmt.Errorf("%w: schedules made by the agent are turned off for this agent (agent_schedules: off); "+
			"a person can add one with %sschedule add", toolconv.ErrRefused, bridges.CommandPrefix)
	case profile.AgentSchedulesAsk:
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
		lines = append(lines, schedreq.Line(sc, t.core.clock.Now(), t.key)+"\n  prompt: "+textcut.OneLine(sc.Prompt, 300))
	}
	return strings.Join(lines, "\n"), nil
}

func (t *toolConv) CancelSchedule(ctx context.Context, id int64) (string, error) {
	sc, err := t.core.st.ScheduleByID(ctx, id)
	if errors.Is(err, store.ErrNotFound) || err == nil && (!sc.Active() || sc.ConversationID != t.convID) {
		return "", fmt.Errorf("%w: this conversation has no schedule #%d (see list_schedules)", toolconv.ErrRefused, id)
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
