package core

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/agentbridge/agentbridge/queue"
	"github.com/agentbridge/agentbridge/store"
)

// Origin says who a message comes from, which decides what it may do
// (DESIGN.md §11, "origin decides authority"):
//   - OriginPerson: a person wrote it on a platform. It may be a chat
//     command, may answer an open card, and carries its author's rights.
//   - OriginSchedule: a schedule fired. Always a prompt for the agent,
//     never a command or a card answer; it carries nobody's rights: the
//     cards of its turn go to the schedule's creator when a person made
//     it, and to the bot's approvers and admins.
//   - OriginAgent: reserved for prompts the bridge's agent tools would
//     submit; handled like OriginSchedule (no tool submits one today).
type Origin = store.Origin

// The origins of accepted messages.
const (
	OriginPerson   = store.OriginPerson
	OriginSchedule = store.OriginSchedule
	OriginAgent    = store.OriginAgent
)

// submission is a message for a conversation's ledger, from any origin.
type submission struct {
	origin     Origin
	conv       store.Conversation
	msgID      string // the platform's message id, or "schedule-<id>-<unix>": unique per bot
	user       string // the author (a person), or the schedule's creator when a person made it, or ""
	userName   string
	text       string
	files      []byte // encodeFiles
	scheduleID int64  // OriginSchedule: which schedule fired
	replyTo    string // the platform id of the message it quotes ("" = none)
	quoted     string // the quoted message's text, for the agent
	// accepted, when set, runs once the message is recorded (not for a
	// duplicate) and before the worker is told of it.
	accepted func(ctx context.Context)
}

// submit is the one way work enters a conversation: it records s in the
// ledger (durably, before it returns nil: the caller may then acknowledge
// its source) and hands it to the conversation's worker, starting one if
// needed. A duplicate (same bot and message id) is recorded once and not
// handed on again. A worker that cannot take it now leaves it pending in
// the ledger, delivered with the worker's next input: still accepted.
func (c *Core) submit(ctx context.Context, s submission, log *slog.Logger) (store.InboxMessage, bool, error) {
	msg, dup, err := c.st.Enqueue(ctx, store.InboxMessage{
		ConversationID: s.conv.ID, Bot: s.conv.Key.Bot, PlatformMsgID: s.msgID, UserID: s.user, UserName: s.userName,
		Text: s.text, Files: s.files, Origin: s.origin, ScheduleID: s.scheduleID,
		ReplyTo: s.replyTo, Quoted: s.quoted,
	})
	if err != nil {
		return store.InboxMessage{}, false, fmt.Errorf("record message %s: %w", s.msgID, err)
	}
	if dup {
		return msg, true, nil
	}
	log.Debug("message accepted", "ledger", msg.ID, "origin", s.origin)
	if s.accepted != nil {
		s.accepted(ctx)
	}
	switch cv, err := c.deliver(s.conv, inPoke{}); {
	case errors.Is(err, queue.ErrFull):
		cv.rescan.Store(true) // delivered after the input the worker is handling
		log.Warn("conversation queue full; the message stays pending in the ledger", "ledger", msg.ID)
	case err != nil:
		log.Warn("message kept in the ledger for later delivery", "ledger", msg.ID, "err", err)
	}
	return msg, false, nil
}
