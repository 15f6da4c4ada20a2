package slack

import (
	"context"
	"log/slog"
	"strings"

	slackapi "github.com/slack-go/slack"

	"github.com/agentbridge/agentbridge/bridges"
)

// interaction turns the card button clicks of a block_actions payload
// into Actions for the core. The envelope was acked already.
func (b *Bridge) interaction(ctx context.Context, h bridges.Handler, cb slackapi.InteractionCallback) {
	if cb.Type != slackapi.InteractionTypeBlockActions {
		return
	}
	channel := cb.Container.ChannelID
	if channel == "" {
		channel = cb.Channel.ID
	}
	msgTS := cb.Container.MessageTs
	if msgTS == "" {
		msgTS = cb.Message.Timestamp
	}
	thread := cb.Container.ThreadTs
	if thread == "" {
		thread = cb.Message.ThreadTimestamp
	}
	if thread == msgTS {
		thread = "" // the card is a thread's root: a top-level DM message
	}
	key := bridges.ConversationKey{Bot: b.name, Channel: channel, Thread: thread}
	user := cb.User.ID
	for _, act := range cb.ActionCallback.BlockActions {
		if act == nil || !strings.HasPrefix(act.BlockID, "card:") {
			continue
		}
		choice := act.ActionID
		cardID, ok := strings.CutSuffix(act.Value, "|"+choice)
		if !ok {
			cardID = strings.TrimPrefix(act.BlockID, "card:")
		}
		a := bridges.Action{
			Key:      key,
			CardID:   cardID,
			Choice:   choice,
			UserID:   user,
			UserName: b.userName(ctx, user),
			Reply: func(ctx context.Context, text string) error {
				return b.ephemeral(ctx, channel, thread, user, text)
			},
		}
		hctx, cancel := context.WithTimeout(ctx, b.handlerTimeout)
		err := h.HandleAction(hctx, a)
		cancel()
		if err != nil {
			b.log.Warn("slack button click not handled", slog.Any("key", key), slog.String("card", cardID),
				slog.String("choice", choice), slog.String("err", b.redact.Err(err)))
		}
	}
}
