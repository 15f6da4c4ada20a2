package core

import (
	"cmp"

	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/store"
)

// Observer sees conversations as they happen, beside their platform: the
// terminals attached with `bridge attach` (bridges/features/handoff). Its methods
// are called on the conversation's worker: they must return at once
// (hand the value on without blocking, dropping it when the reader is
// slow) and must not call back into the core.
type Observer interface {
	// AgentEvent is each event of the conversation's live agent.
	AgentEvent(key bridges.ConversationKey, ev streamjson.Event)
	// Shown is each notice, card and card update the conversation shows
	// (a card carries CardID and, while open, Buttons).
	Shown(key bridges.ConversationKey, m bridges.Message)
	// Sent is each message handed to the agent: the platform message id
	// it came with, its author's name (or id; "" for a schedule's run)
	// and the text the agent got.
	Sent(key bridges.ConversationKey, msgID, from, text string)
}

// observeEvent hands ev to the Observer, if any.
func (cv *conversation) observeEvent(ev streamjson.Event) {
	if o := cv.core.opts.Observer; o != nil {
		o.AgentEvent(cv.key, ev)
	}
}

// observeSent hands ledger message m, sent to the agent as text, to the
// Observer, if any.
func (cv *conversation) observeSent(m store.InboxMessage, text string) {
	if o := cv.core.opts.Observer; o != nil {
		o.Sent(cv.key, m.PlatformMsgID, cmp.Or(m.UserName, m.UserID), text)
	}
}

// observeShown hands m to the Observer, if any.
func (cv *conversation) observeShown(m bridges.Message) {
	if o := cv.core.opts.Observer; o != nil {
		o.Shown(cv.key, m)
	}
}
