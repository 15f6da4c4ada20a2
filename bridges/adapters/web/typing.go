package web

import (
	"context"
	"strings"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/adapters/web/feed"
)

// startingFor bounds how long a conversation shows "Starting the agent…"
// without news of its agent: a start that neither runs a turn nor posts
// anything (the core answers every message that starts no turn).
const startingFor = 3 * time.Minute

// turnState is what a conversation's agent does, as its pages show it:
// working (a turn runs), or starting since a time (a message was accepted
// and no turn runs yet: the agent starts or resumes), or neither.
type turnState struct {
	working  bool
	starting time.Time // zero: not starting
}

// SetTyping implements bridges.Typer: the pages show that a turn runs (and
// its Stop button) until it ends. A turn that begins ends the start.
func (c *Console) SetTyping(ctx context.Context, key bridges.ConversationKey, on bool) error {
	c.setTurn(key, on, time.Time{})
	c.hub.Publish(ctx, feed.ThreadTopic(key.Thread), feed.Event{Kind: feed.Typing, Thread: key.Thread, On: on, Key: key})
	return nil
}

// setTurn notes the state of key's conversation, for pages that
// (re)connect.
func (c *Console) setTurn(key bridges.ConversationKey, working bool, starting time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if working || !starting.IsZero() {
		c.turns[key] = turnState{working: working, starting: starting}
	} else {
		delete(c.turns, key)
	}
}

// turn reports whether a turn runs in key's conversation, and else
// whether its agent is starting (for at most startingFor).
func (c *Console) turn(key bridges.ConversationKey) (working, starting bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.turns[key]
	return st.working, !st.working && !st.starting.IsZero() && c.now().Sub(st.starting) < startingFor
}

// startTurn notes that a message a person sent into key's conversation is
// being handed to the core and shows "Starting the agent…" on its pages
// until a turn runs or the bridge answers: not for a command (it starts
// no turn) nor while a turn runs (the message joins it). It reports
// whether it did (then, should the core refuse the message, endStart).
func (c *Console) startTurn(ctx context.Context, key bridges.ConversationKey, text string) bool {
	if strings.HasPrefix(text, bridges.CommandPrefix) {
		return false
	}
	c.mu.Lock()
	if c.turns[key].working {
		c.mu.Unlock()
		return false
	}
	c.turns[key] = turnState{starting: c.now()}
	c.mu.Unlock()
	c.hub.Publish(ctx, feed.ThreadTopic(key.Thread), feed.Event{Kind: feed.Typing, Thread: key.Thread, Starting: true, Key: key})
	return true
}

// endStart ends a start that no turn ended: the bridge answered otherwise
// (a post, a notice) or did not take the message.
func (c *Console) endStart(ctx context.Context, key bridges.ConversationKey) {
	c.mu.Lock()
	st, ok := c.turns[key]
	if !ok || st.working || st.starting.IsZero() {
		c.mu.Unlock()
		return
	}
	delete(c.turns, key)
	c.mu.Unlock()
	c.hub.Publish(ctx, feed.ThreadTopic(key.Thread), feed.Event{Kind: feed.Typing, Thread: key.Thread, Key: key})
}

// Starting lists the conversations whose agent is starting, with since
// when (the live agents page).
func (c *Console) Starting() map[bridges.ConversationKey]time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[bridges.ConversationKey]time.Time{}
	for k, st := range c.turns {
		if !st.working && !st.starting.IsZero() && c.now().Sub(st.starting) < startingFor {
			out[k] = st.starting
		}
	}
	return out
}

// turnData is the "typing" event's data: a turn runs (on), or the agent
// starts.
func turnData(working, starting bool) map[string]bool {
	return map[string]bool{"on": working, "starting": starting}
}
