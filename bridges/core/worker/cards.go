package worker

import (
	"context"
	"encoding/json"
	"maps"
	"time"

	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core/access"
	"github.com/agentbridge/agentbridge/bridges/core/agents"
	"github.com/agentbridge/agentbridge/bridges/core/delivery"
	"github.com/agentbridge/agentbridge/bridges/core/live"
	"github.com/agentbridge/agentbridge/bridges/core/render"
	"github.com/agentbridge/agentbridge/store"
)

// This file is the seam of the cards (bridges/features/cards, above the core): the
// permission, plan, question, elicitation and approval cards of a
// conversation, with the "Always allow" grants and !rules. CoreOptions.Cards
// makes each worker's CardSet; the set acts on its conversation through
// Conv, whose methods for the cards are below.

// newCards is the card set of the new worker cv (Options.Cards'; the
// core's default fails closed: bridges/core/worker/nocards).
func newCards(cv *conversation) CardSet { return cv.opts.Cards.New(Conv{cv}) }

// The conversation as its cards see it (bridges/features/cards' Host).

// Limits are the conversation's platform limits.
func (c Conv) Limits() bridges.Limits { return c.cv.limits }

// MaxRunes is the longest message the platform takes, in runes.
func (c Conv) MaxRunes() int { return c.cv.screen.MaxRunes() }

// IsApprover reports whether user may decide any card of the bot (its
// approvers and admins).
func (c Conv) IsApprover(user string) bool { return access.IsApprover(c.cv.bot, user) }

// ScheduledRun names the schedule whose run the current turn is ("").
func (c Conv) ScheduledRun() string { return c.cv.scheduledRun() }

// StartTimer arms card id's approval timeout: when it fires, the worker
// calls its CardSet's Expire(id). StopTimer disarms it.
func (c Conv) StartTimer(d time.Duration, id string) {
	c.cv.timers.After(d, timerKey{timerApproval, id})
}

// StopTimer disarms card id's approval timeout.
func (c Conv) StopTimer(id string) { c.cv.timers.Cancel(timerKey{timerApproval, id}) }

// BeginTurn starts a turn if none runs.
func (c Conv) BeginTurn(ctx context.Context) { c.cv.beginTurn(ctx) }

// CountApproval counts a card's decision in the metrics.
func (c Conv) CountApproval(decision string) {
	c.cv.opts.Metrics.Approval(c.cv.bot.Name, decision)
}

// Post posts m at once (urgent, within the channel's budget).
func (c Conv) Post(ctx context.Context, m bridges.Message) (bridges.MessageRef, error) {
	c.cv.screen.Take(true)
	c.cv.opts.Observer.Shown(c.cv.key, m)
	return c.cv.screen.Post(ctx, m)
}

// EditOrPost edits ref to m at once, or posts instead where ref can no
// longer be edited.
func (c Conv) EditOrPost(ctx context.Context, ref bridges.MessageRef, m, instead bridges.Message) (bridges.MessageRef, error) {
	c.cv.screen.Take(true)
	c.cv.opts.Observer.Shown(c.cv.key, m)
	return c.cv.screen.EditOrPost(ctx, ref, m, instead)
}

// ReplyPrivately answers the clicker of a only.
func (c Conv) ReplyPrivately(ctx context.Context, a bridges.Action, text string) {
	delivery.ReplyPrivately(ctx, c.cv.log, a, text)
}

// Record runs a store write in the conversation's order of writes,
// logging (and, on a full disk, retrying) a failure.
func (c Conv) Record(ctx context.Context, what string, do func(ctx context.Context) error, attrs ...any) {
	if _, err := c.cv.writes.Record(ctx, delivery.Write{What: what, Do: do}); err != nil && !c.cv.fenced(err) {
		c.cv.log.Error(what, append(attrs, "err", err)...)
	}
}

// Requesters are who may decide the current turn's cards besides the
// approvers (requesters).
func (c Conv) Requesters() map[string]Person { return c.cv.requesters() }

// Respond answers the live agent's permission request id (nothing without
// a live agent).
func (c Conv) Respond(ctx context.Context, id string, d streamjson.Decision) error {
	if c.cv.sess == nil {
		return nil
	}
	return c.cv.sess.Respond(ctx, id, d)
}

// CanElicit reports whether the live agent can answer elicitations.
func (c Conv) CanElicit() bool {
	_, ok := c.cv.sess.(agents.Elicitor)
	return ok
}

// RespondElicitation answers the live agent's elicitation id (nothing
// without that ability).
func (c Conv) RespondElicitation(ctx context.Context, id, action string, content map[string]any) error {
	r, ok := c.cv.sess.(agents.Elicitor)
	if !ok {
		return nil
	}
	return r.RespondElicitation(ctx, id, action, content)
}

// RestartSoon makes a live agent process forget what it holds for its
// session (a removed grant): it restarts it now, resuming the session,
// or when the current turn ends (later) while a turn, a message or a
// card is open. Nothing without a live agent.
func (c Conv) RestartSoon(ctx context.Context) (later bool) {
	cv := c.cv
	switch {
	case cv.sess == nil:
	case cv.turn != nil || len(cv.inflight) > 0 || cv.cards.Len() > 0:
		cv.restartAfterTurn = true
		return true
	default:
		cv.restartProcess(ctx)
	}
	return false
}

// BeforeCard closes the turn's live message so the rest of the turn appears
// below the card. On a quick turn its first post is not due yet: it posts
// the text that introduces the card now, or it would show below the card.
func (c Conv) BeforeCard(ctx context.Context) {
	cv := c.cv
	t := cv.turn
	if t == nil || !t.Live.Posted && !(cv.streams() && render.HasText(t.Segs)) {
		return
	}
	text := render.Tail(render.Join(t.Segs), cv.screen.MaxRunes())
	if t.Live.Posted {
		cv.finishLive(ctx, text)
	} else if text != "" {
		cv.timers.Cancel(timerKey{timerLive, ""})
		cv.screen.Take(true)
		if _, err := cv.screen.Post(ctx, bridges.Message{Text: text, ReplyTo: t.ReplyTo}); err != nil {
			cv.log.Warn("post the text before a card", "err", err)
		}
	}
	t.Live = live.Msg{}
	t.Segs, t.Streaming, t.ToolSeg = nil, false, make(map[string]int)
}

// Note adds a line to the turn's live message.
func (c Conv) Note(ctx context.Context, line string) {
	c.cv.beginTurn(ctx).AddNote(line)
	c.cv.touchLive(ctx)
}

// ToolWaiting shows on the live message that the tool call toolUseID
// waits for a decision.
func (c Conv) ToolWaiting(ctx context.Context, toolUseID string) {
	if t := c.cv.turn; t != nil && t.Live.ToolWaiting(toolUseID) {
		c.cv.touchLive(ctx)
	}
}

// ToolDecided shows on the live message that the tool call toolUseID was
// allowed or denied.
func (c Conv) ToolDecided(ctx context.Context, toolUseID string, allowed bool) {
	if t := c.cv.turn; t != nil && t.Live.ToolDecided(toolUseID, allowed) {
		c.cv.touchLive(ctx)
	}
}

// ToolInput is the input of the turn's tool call toolUseID (nil if
// unknown).
func (c Conv) ToolInput(toolUseID string) json.RawMessage {
	if t := c.cv.turn; t != nil {
		if u, ok := t.Tools[toolUseID]; ok {
			return u.Input
		}
	}
	return nil
}

// requesters are the people who may decide the turn's requests besides the
// approvers: the deciders of the messages the turn handles (their authors;
// for a schedule's firing its creator when a person made it, else nobody).
// For a turn the agent started itself (after a background task): the
// deciders of the last message sent to it, and the conversation's owner
// only when that was a person's message or nothing was sent since the
// worker started.
func (cv *conversation) requesters() map[string]Person {
	out := make(map[string]Person)
	switch {
	case cv.turn != nil && (cv.turn.fromLedger || len(cv.turn.requesters) > 0):
		maps.Copy(out, cv.turn.requesters)
		return out
	case cv.lastSent != nil:
		maps.Copy(out, cv.lastSent.deciders())
		if cv.lastSent.origin != store.OriginPerson {
			return out
		}
	}
	if o := cv.row.OwnerUserID; o != "" {
		if _, ok := out[o]; !ok {
			out[o] = Person{ID: o}
		}
	}
	return out
}

// scheduledRun names the schedule whose run the current turn is ("" if
// none), for its cards.
func (cv *conversation) scheduledRun() string {
	switch {
	case cv.turn != nil && cv.turn.fromLedger:
		return cv.turn.scheduled
	case cv.lastSent != nil:
		return cv.lastSent.scheduledRun(cv.opts.RunLabel)
	}
	return ""
}

// onOperatorAction applies an operator's decision; it runs on the worker.
func (cv *conversation) onOperatorAction(ctx context.Context, v inOperatorAction) {
	v.done <- cv.cards.Operator(ctx, v.a)
}
