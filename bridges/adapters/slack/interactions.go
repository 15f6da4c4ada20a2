package slack

import (
	"context"
	"log/slog"
	"strings"

	slackapi "github.com/slack-go/slack"

	"github.com/agentbridge/agentbridge/bridges"
)

// interaction turns the card button clicks of a block_actions payload
// into Actions for the core, and so the clicks on the feedback buttons
// under a streamed answer (block_id feedbackBlockPrefix + CardID, the
// button's value the choice). The envelope was acked already.
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
		if act == nil {
			continue
		}
		cardID, choice, ok := clickOf(act)
		if !ok {
			continue
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

// clickOf is the card and choice of one block action: a card button
// (block_id "card:" + CardID, action_id the choice) or a feedback button
// (block_id feedbackBlockPrefix + CardID, value the choice). ok is false
// for anything else.
func clickOf(act *slackapi.BlockAction) (cardID, choice string, ok bool) {
	if fb, found := strings.CutPrefix(act.BlockID, feedbackBlockPrefix); found {
		if act.Value != bridges.ChoiceGood && act.Value != bridges.ChoiceBad {
			return "", "", false
		}
		return fb, act.Value, fb != ""
	}
	if !strings.HasPrefix(act.BlockID, "card:") {
		return "", "", false
	}
	choice = act.ActionID
	cardID, found := strings.CutSuffix(act.Value, "|"+choice)
	if !found {
		cardID = strings.TrimPrefix(act.BlockID, "card:")
	}
	return cardID, choice, true
}
