package core

import (
	"context"
	"errors"
	"fmt"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core/access"
	"github.com/agentbridge/agentbridge/bridges/core/ownership"
	"github.com/agentbridge/agentbridge/bridges/core/worker"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/store"
)

// Submit is the one way work enters a conversation, for platforms (through
// HandleMessage), schedules and the agent's tools alike. It records s in
// the ledger (durably, before it returns nil: the caller may then
// acknowledge its source) and hands it to the conversation's worker,
// starting one if needed. A duplicate (same bot and message id) is
// recorded once and not handed on again. A worker that cannot take it now
// leaves it pending in the ledger, delivered with the worker's next input:
// still accepted. Submit checks no access list: callers do (HandleMessage
// for people; a schedule or tool was authorised when it was made). It
// fails closed on a submission with an unknown origin.
func (c *Core) Submit(ctx context.Context, s Submission) (Receipt, error) {
	switch s.Origin {
	case OriginPerson, OriginSchedule, OriginAgent:
	default:
		return Receipt{}, fmt.Errorf("submit %s: origin %q: %w", s.MsgID, s.Origin, ErrBadSubmission)
	}
	if s.MsgID == "" || s.Conv.ID == "" {
		return Receipt{}, fmt.Errorf("submit %q: message id and conversation are required: %w", s.MsgID, ErrBadSubmission)
	}
	log := s.Log
	if log == nil {
		log = c.log.With("conversation", s.Conv.ID, "msg_id", s.MsgID)
	}
	msg, dup, err := c.st.Enqueue(ctx, store.InboxMessage{
		ConversationID: s.Conv.ID, Bot: s.Conv.Key.Bot, PlatformMsgID: s.MsgID, UserID: s.User, UserName: s.UserName,
		Text: s.Text, Files: s.Files, Origin: s.Origin, ScheduleID: s.ScheduleID,
		ReplyTo: s.ReplyTo, Quoted: s.Quoted,
	})
	if err != nil {
		return Receipt{}, fmt.Errorf("record message %s: %w", s.MsgID, err)
	}
	if dup {
		return Receipt{Msg: msg, Duplicate: true}, nil
	}
	log.Debug("message accepted", "ledger", msg.ID, "origin", s.Origin)
	if s.Accepted != nil {
		s.Accepted(ctx)
	}
	switch w, err := c.deliver(s.Conv, worker.Poke()); {
	case worker.Full(err):
		w.Rescan() // delivered after the input the worker is handling
		log.Warn("conversation queue full; the message stays pending in the ledger", "ledger", msg.ID)
	case errors.Is(err, ownership.ErrHeldElsewhere):
		log.Debug("message handed to the replica running the conversation", "ledger", msg.ID)
	case err != nil:
		log.Warn("message kept in the ledger for later delivery", "ledger", msg.ID, "err", err)
	}
	return Receipt{Msg: msg}, nil
}

// Access rules of a bot (config.Access). Ids are compared verbatim: adapters
// report channel and user ids in the form admins write in the config.

// Allowed implements Handler: whether user may talk to the bot key.Bot in
// key.Channel, by the same rules HandleMessage applies (an unknown bot
// allows nobody). It does no I/O.
func (c *Core) Allowed(key bridges.ConversationKey, user string) bool {
	if c.cfg() == nil {
		return false
	}
	b := c.cfg().Bot(key.Bot)
	return b != nil && channelAllowed(b, key.Channel) && userAllowed(b, user)
}

// channelAllowed reports whether the bot may work in channel (an empty
// Channels list allows every channel the bot is in).
func channelAllowed(b *config.Bot, channel string) bool { return access.ChannelAllowed(b, channel) }

// userAllowed reports whether user may talk to the bot: anyone when Users is
// empty, else the listed users, approvers and admins.
func userAllowed(b *config.Bot, user string) bool { return access.UserAllowed(b, user) }
