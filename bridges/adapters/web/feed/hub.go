// Package feed carries the web console's live updates to the open pages:
// a hub that fans events out by topic to the pages' event streams (one
// conversation's pages, or every page of one person), their fan-out
// across replicas (Fanout, on a signal channel of the shared store) and
// their wire format (server-sent events). What a page may see is not
// decided here: the console asks the access decision before it writes an
// event to a stream.
package feed

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/store"
)

// Heartbeat keeps idle event streams (and proxies) from timing out.
const Heartbeat = 20 * time.Second

// subscriberBuffer is how many events a page may lag behind before its
// stream is ended; the page reconnects and catches up from the store.
const subscriberBuffer = 64

// Kind says what an Event carries.
type Kind int

// The kinds of events.
const (
	Message Kind = iota // a message was added or edited
	Typing              // a turn started or ended, or the agent starts
	Notice              // a private notice for the user
	List                // a conversation list changed
)

// Event is one change for the pages of a conversation (published on its
// ThreadTopic) or of a person (UserTopic).
type Event struct {
	Kind     Kind
	Thread   string                  // the conversation; "" for a notice about the whole channel
	User     string                  // Notice: the only person who sees it
	Msg      store.WebMessage        // Message
	On       bool                    // Typing: a turn runs
	Starting bool                    // Typing: no turn runs yet, the agent starts
	Key      bridges.ConversationKey // Typing: the conversation (the other replicas note its state)
	Text     string                  // Notice
}

// ThreadTopic is the topic of one conversation's pages.
func ThreadTopic(thread string) string { return "t:" + thread }

// UserTopic is the topic of every page of one person (their conversation
// list, their notices).
func UserTopic(user string) string { return "u:" + user }

// Subscriber is one open event stream.
type Subscriber struct {
	ch     chan Event
	gone   chan struct{}
	once   sync.Once
	topics []string
}

// Events delivers the stream's events in the order published.
func (s *Subscriber) Events() <-chan Event { return s.ch }

// Gone is closed when the hub drops the stream: it fell behind, signals
// from other replicas were missed, or the hub closed. Its page reconnects
// and catches up from the store.
func (s *Subscriber) Gone() <-chan struct{} { return s.gone }

func (s *Subscriber) drop() { s.once.Do(func() { close(s.gone) }) }

// Hub fans events out to the open pages by topic, and with Fanout running
// to the pages of the other replicas. Publishing never blocks on a page.
type Hub struct {
	log *slog.Logger
	fan atomic.Pointer[fanout] // set while Fanout runs

	mu     sync.Mutex
	subs   map[string]map[*Subscriber]struct{}
	closed bool
}

// New returns a hub that logs to log (nil discards).
func New(log *slog.Logger) *Hub {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Hub{log: log, subs: make(map[string]map[*Subscriber]struct{})}
}

// Subscribe opens a stream for topics; the caller must Unsubscribe. After
// Close the stream is gone at once.
func (h *Hub) Subscribe(topics ...string) *Subscriber {
	s := &Subscriber{ch: make(chan Event, subscriberBuffer), gone: make(chan struct{}), topics: topics}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		s.drop()
		return s
	}
	for _, t := range topics {
		if h.subs[t] == nil {
			h.subs[t] = make(map[*Subscriber]struct{})
		}
		h.subs[t][s] = struct{}{}
	}
	return s
}

// Unsubscribe takes s off its topics.
func (h *Hub) Unsubscribe(s *Subscriber) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.remove(s)
}

// remove takes s off its topics; h.mu is held.
func (h *Hub) remove(s *Subscriber) {
	for _, t := range s.topics {
		delete(h.subs[t], s)
		if len(h.subs[t]) == 0 {
			delete(h.subs, t)
		}
	}
}

// local hands ev to every stream of topic here; a stream whose buffer is
// full is dropped instead of waited for.
func (h *Hub) local(topic string, ev Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range h.subs[topic] {
		select {
		case s.ch <- ev:
		default:
			s.drop()
			h.remove(s)
		}
	}
}

// has reports whether a stream of topic is open.
func (h *Hub) has(topic string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.subs[topic]) > 0
}

// dropAll drops every open stream (their pages reconnect and catch up
// from the store); later ones are kept.
func (h *Hub) dropAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.dropLocked()
}

func (h *Hub) dropLocked() {
	for _, subs := range h.subs {
		for s := range subs {
			s.drop()
		}
	}
	h.subs = make(map[string]map[*Subscriber]struct{})
}

// Close drops every stream, now and later.
func (h *Hub) Close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	h.dropLocked()
}

// WriteEvent appends one server-sent event named name (with the event id
// id, unless empty) to buf; data is encoded as JSON on one line.
func WriteEvent(buf *bytes.Buffer, name, id string, data any) {
	b, err := json.Marshal(data)
	if err != nil {
		b = []byte("{}")
	}
	if id != "" {
		fmt.Fprintf(buf, "id: %s\n", id)
	}
	fmt.Fprintf(buf, "event: %s\ndata: %s\n\n", name, b)
}
