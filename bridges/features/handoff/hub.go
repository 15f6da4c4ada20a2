package handoff

import (
	"slices"
	"sync"

	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core/access"
	"github.com/agentbridge/agentbridge/bridges/core/worker"
)

// eventBuffer is how many events wait for a slow terminal before more are
// dropped (the terminal is told: EventLost).
const eventBuffer = 1024

// Hub is the core's Observer: it hands each conversation's events to the
// terminals attached to it. Its methods are safe for concurrent use; the
// core's calls never block.
type Hub struct {
	mu    sync.Mutex
	byKey map[bridges.ConversationKey]map[*attachment]struct{}
	byID  map[string]*attachment
}

var _ worker.Observer = (*Hub)(nil)

// NewHub returns a hub with nobody attached.
func NewHub() *Hub {
	return &Hub{byKey: map[bridges.ConversationKey]map[*attachment]struct{}{}, byID: map[string]*attachment{}}
}

// attachment is one terminal attached to one conversation.
type attachment struct {
	id     string
	key    bridges.ConversationKey
	convID string
	person string        // the handoff user's name
	userID string        // their user id on the conversation's bot
	who    access.Person // for the access decision, asked again while attached
	events chan Event
	mu     sync.Mutex
	lost   bool     // events were dropped since the last EventLost
	sent   []string // the message ids this terminal sent, the newest maxSentIDs
}

// maxSentIDs bounds the message ids an attachment remembers sending.
const maxSentIDs = 64

// noteSent remembers that this terminal sent message id.
func (a *attachment) noteSent(id string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.sent) == maxSentIDs {
		a.sent = a.sent[1:]
	}
	a.sent = append(a.sent, id)
}

// sentHere reports whether this terminal sent message id.
func (a *attachment) sentHere(id string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Contains(a.sent, id)
}

// push hands ev to the terminal, or drops it when the terminal is behind.
func (a *attachment) push(ev Event) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.lost {
		return // until the writer has told the terminal
	}
	select {
	case a.events <- ev:
	default:
		a.lost = true
	}
}

// takeLost reports (and clears) that events were dropped.
func (a *attachment) takeLost() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	l := a.lost
	a.lost = false
	return l
}

// AgentEvent implements worker.Observer.
func (h *Hub) AgentEvent(key bridges.ConversationKey, ev streamjson.Event) {
	if e, ok := fromAgent(ev); ok {
		h.broadcast(key, e)
	}
}

// Sent implements worker.Observer: every attached terminal but the one that
// sent it sees the message.
func (h *Hub) Sent(key bridges.ConversationKey, msgID, from, text string) {
	ev := Event{Type: EventMessage, Text: text, From: from}
	h.mu.Lock()
	defer h.mu.Unlock()
	for a := range h.byKey[key] {
		if !a.sentHere(msgID) {
			a.push(ev)
		}
	}
}

// Shown implements worker.Observer.
func (h *Hub) Shown(key bridges.ConversationKey, m bridges.Message) {
	h.broadcast(key, fromShown(m))
}

// broadcast pushes ev to every terminal attached to key.
func (h *Hub) broadcast(key bridges.ConversationKey, ev Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for a := range h.byKey[key] {
		a.push(ev)
	}
}

// add registers a.
func (h *Hub) add(a *attachment) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.byKey[a.key] == nil {
		h.byKey[a.key] = map[*attachment]struct{}{}
	}
	h.byKey[a.key][a] = struct{}{}
	h.byID[a.id] = a
}

// remove unregisters a.
func (h *Hub) remove(a *attachment) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.byKey[a.key], a)
	if len(h.byKey[a.key]) == 0 {
		delete(h.byKey, a.key)
	}
	delete(h.byID, a.id)
}

// get returns the attachment id, or nil.
func (h *Hub) get(id string) *attachment {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.byID[id]
}

// Attached returns how many terminals are attached to key.
func (h *Hub) Attached(key bridges.ConversationKey) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.byKey[key])
}
