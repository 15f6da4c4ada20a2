package slack

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	slackapi "github.com/slack-go/slack"

	"github.com/agentbridge/agentbridge/bridges"
)

const (
	// workingStatus is shown as "<app name> is working…".
	workingStatus = "is working…"
	// workingReaction marks the message being worked on where no thread
	// status is available.
	workingReaction = "hourglass_flowing_sand"
)

// typingState remembers where assistant.threads.setStatus does not work
// and which message carries the working reaction of a conversation.
type typingState struct {
	mu          sync.Mutex
	noStatus    bool            // the method is unusable for this app
	noStatusIn  map[string]bool // channels where it failed
	reactedMsgs map[string]string
}

func newTypingState() typingState {
	return typingState{noStatusIn: map[string]bool{}, reactedMsgs: map[string]string{}}
}

// appWideStatusErrors mean assistant.threads.setStatus cannot work for
// this app anywhere.
func appWideStatusError(code string) bool {
	switch code {
	case "missing_scope", "not_allowed_token_type", "method_deprecated", "deprecated_endpoint",
		"unknown_method", "not_allowed", "feature_not_enabled", "is_bot":
		return true
	}
	return false
}

// SetTyping implements bridges.Typer. In a thread it sets the thread's
// status ("<app> is working…", cleared by on=false or by the next reply)
// with assistant.threads.setStatus. Where Slack refuses that (errors are
// remembered per channel, or for the app on scope/feature errors), and
// for top-level DMs, it adds the hourglass_flowing_sand reaction to the
// conversation's latest inbound message instead and removes it again on
// on=false.
func (b *Bridge) SetTyping(ctx context.Context, key bridges.ConversationKey, on bool) error {
	if key.Thread != "" && b.statusUsable(key.Channel) {
		status := ""
		if on {
			status = workingStatus
		}
		err := b.api.SetAssistantThreadsStatusContext(ctx, slackapi.AssistantThreadsSetStatusParameters{
			ChannelID: key.Channel, ThreadTS: key.Thread, Status: status,
		})
		if err == nil {
			return nil
		}
		se, refused := errors.AsType[slackapi.SlackErrorResponse](err)
		if !refused {
			return fmt.Errorf("slack thread status for %s: %w", key, err)
		}
		b.disableStatus(key.Channel, se.Err)
	}
	return b.typingReaction(ctx, key, on)
}

func (b *Bridge) statusUsable(channel string) bool {
	b.typing.mu.Lock()
	defer b.typing.mu.Unlock()
	return !b.typing.noStatus && !b.typing.noStatusIn[channel]
}

func (b *Bridge) disableStatus(channel, code string) {
	b.typing.mu.Lock()
	defer b.typing.mu.Unlock()
	if appWideStatusError(code) {
		b.typing.noStatus = true
	} else {
		if len(b.typing.noStatusIn) > 10000 {
			clear(b.typing.noStatusIn)
		}
		b.typing.noStatusIn[channel] = true
	}
	b.log.Info("slack thread status unavailable; using a reaction instead",
		slog.String("channel", channel), slog.String("err", code), slog.Bool("app_wide", appWideStatusError(code)))
}

// typingReaction adds or removes the working reaction.
func (b *Bridge) typingReaction(ctx context.Context, key bridges.ConversationKey, on bool) error {
	k := key.String()
	b.typing.mu.Lock()
	ts, reacted := b.typing.reactedMsgs[k]
	if on && !reacted {
		ts, _ = b.latest.Get(k)
		if ts != "" {
			b.typing.reactedMsgs[k] = ts
		}
	}
	if !on {
		delete(b.typing.reactedMsgs, k)
	}
	b.typing.mu.Unlock()
	if ts == "" || (on && reacted) || (!on && !reacted) {
		return nil // nothing to mark, already marked, or nothing to clear
	}
	item := slackapi.NewRefToMessage(key.Channel, ts)
	var err error
	if on {
		err = b.api.AddReactionContext(ctx, workingReaction, item)
	} else {
		err = b.api.RemoveReactionContext(ctx, workingReaction, item)
	}
	if se, ok := errors.AsType[slackapi.SlackErrorResponse](err); ok && (se.Err == "already_reacted" || se.Err == "no_reaction") {
		return nil
	}
	if err != nil {
		return fmt.Errorf("slack working reaction on %s: %w", key, err)
	}
	return nil
}
