package core

import (
	"cmp"

	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/store"
)

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
