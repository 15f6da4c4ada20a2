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
	statusOn    map[string]bool // conversations whose thread status is set and not yet cleared by a reply
}

func newTypingState() typingState {
	return typingState{noStatusIn: map[string]bool{}, reactedMsgs: map[string]string{}, statusOn: map[string]bool{}}
}

// maxStatusOn bounds typingState.statusOn (a status left on by a turn that
// never ended must not grow it forever).
const maxStatusOn = 10000

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
// status ("<app> is working…") with assistant.threads.setStatus. Slack
// clears that status when the app replies in the thread, so on=false
// makes no call when a Post (or a stream) into the thread came after
// on=true; otherwise it clears the status. Where Slack refuses the status
// (errors are remembered per channel, or for the app on scope/feature
// errors), and for top-level DMs, it adds the hourglass_flowing_sand
// reaction to the conversation's latest inbound message instead and
// removes it again on on=false.
func (b *Bridge) SetTyping(ctx context.Context, key bridges.ConversationKey, on bool) error {
	if key.Thread != "" && b.statusUsable(key.Channel) {
		status := ""
		if on {
			status = workingStatus
		} else if !b.takeStatusOn(key) {
			return nil // a reply cleared it, or it was never set
		}
		err := b.api.SetAssistantThreadsStatusContext(ctx, slackapi.AssistantThreadsSetStatusParameters{
			ChannelID: key.Channel, ThreadTS: key.Thread, Status: status,
		})
		if err == nil {
			if on {
				b.setStatusOn(key)
			}
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

// setStatusOn remembers that key's thread shows the working status.
func (b *Bridge) setStatusOn(key bridges.ConversationKey) {
	b.typing.mu.Lock()
	defer b.typing.mu.Unlock()
	if len(b.typing.statusOn) >= maxStatusOn {
		clear(b.typing.statusOn)
	}
	b.typing.statusOn[key.String()] = true
}

// takeStatusOn reports whether key's thread shows the working status, and
// forgets it.
func (b *Bridge) takeStatusOn(key bridges.ConversationKey) bool {
	b.typing.mu.Lock()
	defer b.typing.mu.Unlock()
	k := key.String()
	on := b.typing.statusOn[k]
	delete(b.typing.statusOn, k)
	return on
}

// repliedIn notes a message the app posted into key's thread: Slack has
// cleared the thread's status.
func (b *Bridge) repliedIn(key bridges.ConversationKey) {
	if key.Thread != "" {
		b.takeStatusOn(key)
	}
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
