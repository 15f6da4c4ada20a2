package core

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/agentbridge/agentbridge/agent"
	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core/agents"
	"github.com/agentbridge/agentbridge/bridges/core/delivery"
	"github.com/agentbridge/agentbridge/bridges/core/render"
	"github.com/agentbridge/agentbridge/bridges/core/toolconv"
	"github.com/agentbridge/agentbridge/config/profile"
)

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
		core: cv.core, key: cv.key, convID: cv.id, owner: cv.row.OwnerUserID, profile: cv.profile, bot: cv.bot.Name,
		platform: cv.platform, limits: cv.limits, budget: cv.budget, workdir: opts.Workdir,
		hidden: agents.SecretPaths(cv.core.cfg()), log: cv.log.With("mcp_server", ToolServer),
	}
	opts.MCPServers = map[string]agent.MCPServer{ToolServer: cv.core.opts.Tools.Server(tc)}
	opts.AllowedTools = append(opts.AllowedTools, cv.core.tools.Allowed()...)
}

// toolConv is the core's toolconv.Conversation: copies of the conversation's
// fixed facts, its post budget, and the way to its worker's cards.
type toolConv struct {
	core     *Core
	key      bridges.ConversationKey
	convID   string
	owner    string         // the conversation's owner
	profile  *profile.Agent // the conversation's agent profile at spawn
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

func (t *toolConv) ConvID() string          { return t.convID }
func (t *toolConv) Profile() *profile.Agent { return t.profile }
func (t *toolConv) Owner() string           { return t.owner }

// AskApproval implements toolconv.Conversation: the card opens on the
// conversation's running worker (the agent's tools run only while it
// does), waiting for room in its queue until ctx ends.
func (t *toolConv) AskApproval(ctx context.Context, a toolconv.Approval) error {
	t.core.mu.Lock()
	cv := t.core.convs[t.key]
	t.core.mu.Unlock()
	if cv == nil {
		return toolconv.ErrNoWorker
	}
	done := make(chan error, 1)
	if err := cv.q.PushWait(ctx, inCall{func(ctx context.Context, cv *conversation) { done <- cv.cards.OpenApproval(ctx, a) }}); err != nil {
		return err
	}
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}
