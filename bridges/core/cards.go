package core

import (
	"context"
	"encoding/json"
	"log/slog"
	"maps"
	"time"

	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/cards"
	"github.com/agentbridge/agentbridge/bridges/delivery"
	"github.com/agentbridge/agentbridge/bridges/live"
	"github.com/agentbridge/agentbridge/bridges/render"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/config/profile"
)

// cardHost is the conversation as its cards (bridges/cards) see it; its
// methods run on the worker.
type cardHost struct{ cv *conversation }

var _ cards.Host = cardHost{}

func (h cardHost) Log() *slog.Logger                    { return h.cv.log }
func (h cardHost) ConvID() string                       { return h.cv.id }
func (h cardHost) Key() bridges.ConversationKey         { return h.cv.key }
func (h cardHost) Bot() *config.Bot                     { return h.cv.bot }
func (h cardHost) Profile() *profile.Agent              { return h.cv.profile }
func (h cardHost) Limits() bridges.Limits               { return h.cv.limits }
func (h cardHost) MaxRunes() int                        { return h.cv.maxRunes() }
func (h cardHost) Now() time.Time                       { return h.cv.core.clock.Now() }
func (h cardHost) Store() cards.Store                   { return h.cv.st }
func (h cardHost) Notice(ctx context.Context, t string) { h.cv.notice(ctx, t) }
func (h cardHost) IsApprover(user string) bool          { return isApprover(h.cv.bot, user) }
func (h cardHost) ScheduledRun() string                 { return h.cv.scheduledRun() }
func (h cardHost) Live() bool                           { return h.cv.sess != nil }
func (h cardHost) StopTimer(id string)                  { h.cv.cancelTimer(timerApproval, id) }
func (h cardHost) BeginTurn(ctx context.Context)        { h.cv.beginTurn(ctx) }

func (h cardHost) StartTimer(d time.Duration, id string) { h.cv.after(d, timerApproval, id) }

func (h cardHost) CountApproval(decision string) {
	h.cv.core.opts.Metrics.Approval(h.cv.bot.Name, decision)
}

func (h cardHost) Post(ctx context.Context, m bridges.Message) (bridges.MessageRef, error) {
	h.cv.budget.Take(h.cv.core.clock.Now(), h.cv.limits.EditInterval, true)
	h.cv.observeShown(m)
	return h.cv.post(ctx, m)
}

func (h cardHost) EditOrPost(ctx context.Context, ref bridges.MessageRef, m, instead bridges.Message) (bridges.MessageRef, error) {
	h.cv.budget.Take(h.cv.core.clock.Now(), h.cv.limits.EditInterval, true)
	h.cv.observeShown(m)
	return h.cv.editOrPost(ctx, ref, m, instead)
}

func (h cardHost) ReplyPrivately(ctx context.Context, a bridges.Action, text string) {
	replyPrivately(ctx, h.cv.log, a, text)
}

func (h cardHost) Record(ctx context.Context, what string, do func(ctx context.Context) error, attrs ...any) {
	if _, err := h.cv.writes.Record(ctx, delivery.Write{What: what, Do: do}); err != nil && !h.cv.fenced(err) {
		h.cv.log.Error(what, append(attrs, "err", err)...)
	}
}

func (h cardHost) Requesters() map[string]cards.Person {
	rs := h.cv.requesters()
	out := make(map[string]cards.Person, len(rs))
	for id, a := range rs {
		out[id] = cards.Person{ID: a.ID, Name: a.Name}
	}
	return out
}

func (h cardHost) Respond(ctx context.Context, id string, d streamjson.Decision) error {
	if h.cv.sess == nil {
		return nil
	}
	return h.cv.sess.Respond(ctx, id, d)
}

func (h cardHost) CanElicit() bool {
	_, ok := h.cv.sess.(elicitationResponder)
	return ok
}

func (h cardHost) RespondElicitation(ctx context.Context, id, action string, content map[string]any) error {
	r, ok := h.cv.sess.(elicitationResponder)
	if !ok {
		return nil
	}
	return r.RespondElicitation(ctx, id, action, content)
}

// BeforeCard closes the live message so the rest of the turn appears
// below the card. On a quick turn its first post is not due yet: it posts
// the text that introduces the card now, or it would show below the card.
func (h cardHost) BeforeCard(ctx context.Context) {
	cv := h.cv
	t := cv.turn
	if t == nil || !t.Live.Posted && !(cv.streams() && render.HasText(t.Segs)) {
		return
	}
	text := render.Tail(render.Join(t.Segs), cv.maxRunes())
	if t.Live.Posted {
		cv.finishLive(ctx, text)
	} else if text != "" {
		cv.cancelTimer(timerLive, "")
		cv.budget.Take(cv.core.clock.Now(), cv.limits.EditInterval, true)
		if _, err := cv.post(ctx, bridges.Message{Text: text, ReplyTo: t.replyTo}); err != nil {
			cv.log.Warn("post the text before a card", "err", err)
		}
	}
	t.Live = live.Msg{}
	t.Segs, t.Streaming, t.ToolSeg = nil, false, make(map[string]int)
}

func (h cardHost) Note(ctx context.Context, line string) {
	h.cv.beginTurn(ctx).AddNote(line)
	h.cv.touchLive(ctx)
}

func (h cardHost) ToolWaiting(ctx context.Context, toolUseID string) {
	if t := h.cv.turn; t != nil && t.Live.ToolWaiting(toolUseID) {
		h.cv.touchLive(ctx)
	}
}

func (h cardHost) ToolDecided(ctx context.Context, toolUseID string, allowed bool) {
	if t := h.cv.turn; t != nil && t.Live.ToolDecided(toolUseID, allowed) {
		h.cv.touchLive(ctx)
	}
}

func (h cardHost) ToolInput(toolUseID string) json.RawMessage {
	if t := h.cv.turn; t != nil {
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
		if cv.lastSent.origin != OriginPerson {
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
		return cv.lastSent.scheduledRun(cv.core.opts.Scheduler)
	}
	return ""
}
