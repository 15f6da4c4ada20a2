package slack

import (
	"context"
	"fmt"
	"log/slog"

	slackapi "github.com/slack-go/slack"

	"github.com/agentbridge/agentbridge/bridges"
)

// Slack has no idempotency key for chat.postMessage. A reply posted with
// bridges.Message.Idem carries it instead in its message metadata (event
// type replyEventType, payload {"idem": Idem, "part": index}); when the
// core posts it again with Retry set, Post first looks for the bot's
// messages carrying that key and skips the parts already there.
const (
	replyEventType = "agentbridge_reply"
	// lookupPageSize and lookupPages bound the look-up: at most 1,000 of
	// the thread's (or channel's latest) messages are read.
	lookupPageSize = 200
	lookupPages    = 5
)

// replyMetadata is the metadata of part (0-based) of the reply idem.
func replyMetadata(idem string, part int) slackapi.MsgOption {
	return slackapi.MsgOptionMetadata(slackapi.SlackMetadata{
		EventType:    replyEventType,
		EventPayload: map[string]any{"idem": idem, "part": part},
	})
}

// postedParts returns the ts of each part of the reply idem that is
// already in key's thread (or, for a top-level key, among the channel's
// latest messages), by part index. It reads conversations.replies or
// conversations.history with include_all_metadata and keeps only the
// bot's own messages. An error means the look-up failed: the caller must
// not post blindly when it is transient.
func (b *Bridge) postedParts(ctx context.Context, key bridges.ConversationKey, idem string) (map[int]string, error) {
	self := b.identity()
	found := map[int]string{}
	cursor := ""
	method := "conversations.history"
	if key.Thread != "" {
		method = "conversations.replies"
	}
	for range lookupPages {
		var msgs []slackapi.Message
		var more bool
		err := b.retry(ctx, method, nil, func() error {
			var err error
			if key.Thread != "" {
				msgs, more, cursor, err = b.api.GetConversationRepliesContext(ctx, &slackapi.GetConversationRepliesParameters{
					ChannelID: key.Channel, Timestamp: key.Thread, Cursor: cursor,
					Limit: lookupPageSize, IncludeAllMetadata: true,
				})
				return err
			}
			var resp *slackapi.GetConversationHistoryResponse
			resp, err = b.api.GetConversationHistoryContext(ctx, &slackapi.GetConversationHistoryParameters{
				ChannelID: key.Channel, Cursor: cursor, Limit: lookupPageSize, IncludeAllMetadata: true,
			})
			if err == nil {
				msgs, more, cursor = resp.Messages, resp.HasMore, resp.ResponseMetaData.NextCursor
			}
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("look for earlier posts of reply %s in %s: %w", idem, key, err)
		}
		for _, m := range msgs {
			if part, ok := replyPart(m, self, idem); ok {
				found[part] = m.Timestamp
			}
		}
		if !more || cursor == "" {
			break
		}
	}
	return found, nil
}

// replyPart reports which part of the reply idem m is, if m is one of the
// bot's messages carrying that key.
func replyPart(m slackapi.Message, self identity, idem string) (int, bool) {
	if m.Metadata.EventType != replyEventType {
		return 0, false
	}
	switch {
	case self.botID == "" && self.userID == "":
		// Identity not known yet (auth.test has not answered): only
		// apps can post metadata, so any app's message is a candidate.
		if m.BotID == "" {
			return 0, false
		}
	case (self.botID == "" || m.BotID != self.botID) && (self.userID == "" || m.User != self.userID):
		return 0, false
	}
	if got, _ := m.Metadata.EventPayload["idem"].(string); got != idem {
		return 0, false
	}
	switch p := m.Metadata.EventPayload["part"].(type) {
	case float64:
		return int(p), p >= 0 && p == float64(int(p))
	case int:
		return p, p >= 0
	}
	return 0, false
}

// alreadyPosted is postedParts for a Post with Retry set. A look-up that
// fails with a permanent error (such as a missing history scope) is
// logged and treated as "nothing posted": a duplicate is better than a
// lost reply, and the post itself reports what is wrong with the channel.
func (b *Bridge) alreadyPosted(ctx context.Context, key bridges.ConversationKey, m bridges.Message) (map[int]string, error) {
	if !m.Retry || m.Idem == "" {
		return nil, nil
	}
	found, err := b.postedParts(ctx, key, m.Idem)
	if err != nil && isPermanent(err) {
		b.log.Warn("slack look-up before re-posting failed; posting again", slog.String("key", key.String()), slog.String("err", b.redact.Err(err)))
		return nil, nil
	}
	return found, err
}
