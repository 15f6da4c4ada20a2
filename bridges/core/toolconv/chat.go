package toolconv

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core/delivery"
	"github.com/agentbridge/agentbridge/bridges/core/metrics"
	"github.com/agentbridge/agentbridge/bridges/core/render"
	"github.com/agentbridge/agentbridge/config/profile"
)

// Chat is the Conversation a conversation's worker gives the tools of
// its agent process: copies of the conversation's fixed facts at spawn,
// its channel's post budget, and Ask, the way to the worker's cards.
type Chat struct {
	Conv     bridges.ConversationKey
	ID       string         // the store's conversation id
	OwnerID  string         // the conversation's owner
	Agent    *profile.Agent // the conversation's agent profile at spawn
	Bot      string
	Platform bridges.Platform
	Limits   bridges.Limits
	Budget   *delivery.Budget
	Dir      string   // the agent's workdir
	Secret   []string // the paths hidden from the agent
	Logger   *slog.Logger
	Now      func() time.Time
	Metrics  *metrics.Metrics // nil records nothing
	// Ask opens approval a on the conversation's running worker
	// (AskApproval).
	Ask func(ctx context.Context, a Approval) error
}

var _ Conversation = (*Chat)(nil)

func (t *Chat) Key() bridges.ConversationKey { return t.Conv }
func (t *Chat) Log() *slog.Logger            { return t.Logger }
func (t *Chat) Workdir() string              { return t.Dir }
func (t *Chat) Hidden() []string             { return t.Secret }
func (t *Chat) ConvID() string               { return t.ID }
func (t *Chat) Profile() *profile.Agent      { return t.Agent }
func (t *Chat) Owner() string                { return t.OwnerID }

func (t *Chat) UploadLimit() (int64, bool) {
	_, ok := t.Platform.(bridges.FileUploader)
	return t.Limits.MaxUploadBytes, ok
}

func (t *Chat) ToolCalled(tool, outcome string) { t.Metrics.ToolCall(t.Bot, tool, outcome) }

// post posts m into the conversation, within the channel's post budget.
func (t *Chat) post(ctx context.Context, m bridges.Message) (bridges.MessageRef, error) {
	t.Budget.Take(t.Now(), t.Limits.EditInterval, true)
	return t.Platform.Post(ctx, t.Conv, m)
}

func (t *Chat) PostText(ctx context.Context, text string) (int, error) {
	max := t.Limits.MaxMessageRunes
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

func (t *Chat) Upload(ctx context.Context, u bridges.Upload) error {
	up, ok := t.Platform.(bridges.FileUploader)
	if !ok {
		return fmt.Errorf("%w: this chat cannot take attachments", ErrRefused)
	}
	t.Budget.Take(t.Now(), t.Limits.EditInterval, true)
	if _, err := up.UploadFile(ctx, t.Conv, u); err != nil {
		return fmt.Errorf("upload %s: %w", u.Name, err)
	}
	return nil
}

// AskApproval implements Conversation through Ask.
func (t *Chat) AskApproval(ctx context.Context, a Approval) error { return t.Ask(ctx, a) }
