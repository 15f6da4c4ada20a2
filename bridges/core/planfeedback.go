package core

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/store"
)

// This file holds what a native stream (bridges.Streamer) shows beyond
// text and tool tasks: the agent's to-do list as a plan (render.Plan), a tool waiting
// for a person's decision as a pending task, and the 👍/👎 feedback
// buttons under a streamed answer with the recording of their clicks.

// notePlanTool updates the conversation's plan with a tool call (or, with
// r, its result) and, when it changed, has the turn's stream show it.
func (cv *conversation) notePlanTool(ctx context.Context, u streamjson.ToolUse, r *streamjson.ToolResult) {
	changed := false
	if r == nil {
		changed = cv.plan.OnToolUse(u)
	} else {
		changed = cv.plan.OnResult(u, *r)
	}
	if !changed || cv.turn == nil {
		return
	}
	cv.turn.live.stream.Plan = cv.plan.Snapshot()
	cv.turn.live.dirty = true
	cv.touchLive(ctx)
}

// toolWaiting notes that the tool call id waits for a person's decision
// on its card: its task shows pending. It reports whether the stream has
// something new to show.
func (l *liveMsg) toolWaiting(id string) bool {
	if !l.stream.SetWaiting(id, l.stream.s != nil) {
		return false
	}
	l.dirty = true
	return true
}

// toolDecided notes that the card of tool call id was decided: an
// allowed call's task shows in progress again (a refused one becomes
// failed with its result, toolDone). It reports whether the stream has
// something new to show.
func (l *liveMsg) toolDecided(id string, allowed bool) bool {
	if !l.stream.Decided(id, allowed, l.stream.s != nil) {
		return false
	}
	l.dirty = true
	return true
}

// feedbackPrefix starts the CardID of an answer's feedback buttons; the
// rest is the answer's outbox id.
const feedbackPrefix = "feedback:"

// feedbackChunk asks for feedback buttons under the answer that is the
// outbox reply replyID.
func feedbackChunk(replyID string) bridges.StreamChunk {
	return bridges.StreamChunk{Feedback: feedbackPrefix + replyID}
}

// onFeedback records a 👍/👎 click on an answer's feedback buttons. Anyone
// allowed to talk to the bot in the conversation may rate its answers
// (Allowed, as for writing there); the rated answer must be a reply of
// that very conversation. A person's second click replaces their first.
// The clicker hears back privately only when the click is refused.
func (c *Core) onFeedback(ctx context.Context, a bridges.Action) error {
	replyID := strings.TrimPrefix(a.CardID, feedbackPrefix)
	rating := store.Rating(a.Choice)
	if !c.Allowed(a.Key, a.UserID) {
		c.log.Info("feedback refused: not allowed in the conversation", "key", a.Key, "user", a.UserID)
		replyPrivately(ctx, c.log, a, "Sorry, you cannot rate answers here.")
		return nil
	}
	if rating != store.RatingGood && rating != store.RatingBad {
		c.log.Warn("feedback ignored: not a rating", "reply", replyID, "choice", a.Choice, "user", a.UserID)
		return nil
	}
	row, err := c.st.OutboxByID(ctx, replyID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		replyPrivately(ctx, c.log, a, "This answer is too old to rate.")
		return nil
	case err != nil:
		return fmt.Errorf("feedback on %s: %w", replyID, err)
	case bridges.ConversationKey(row.Key) != a.Key:
		c.log.Warn("feedback refused: the answer is not this conversation's", "key", a.Key, "reply", replyID, "user", a.UserID)
		return nil
	}
	changed, err := c.st.RecordFeedback(ctx, store.Feedback{ReplyID: replyID, ConversationID: row.ConversationID, UserID: a.UserID, Rating: rating})
	if err != nil {
		replyPrivately(ctx, c.log, a, "The bridge could not record your feedback; please try again later.")
		return fmt.Errorf("feedback on %s: %w", replyID, err)
	}
	if changed {
		c.opts.Metrics.Feedback(a.Key.Bot, string(rating))
		c.log.Info("answer rated", "key", a.Key, "reply", replyID, "rating", rating, "user", a.UserID)
	}
	return nil
}
