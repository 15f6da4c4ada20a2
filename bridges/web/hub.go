package web

import (
	"sync"

	"github.com/agentbridge/agentbridge/store"
)

// subscriberBuffer is how many events a page may lag behind before its
// stream is ended; the page reconnects and catches up from the store.
const subscriberBuffer = 64

// eventKind says what an event carries.
type eventKind int

const (
	evMessage eventKind = iota // a message was added or edited
	evTyping                   // a turn started or ended
	evNotice                   // a private notice for the user
)

// event is one change for the pages of a user.
type event struct {
	kind   eventKind
	thread string           // the conversation; "" for a notice about the whole channel
	msg    store.WebMessage // evMessage
	on     bool             // evTyping
	text   string           // evNotice
}

// subscriber is one open event stream. gone is closed when the hub drops
// it (it fell behind, or the console shuts down).
type subscriber struct {
	ch   chan event
	gone chan struct{}
	once sync.Once
}

func (s *subscriber) drop() { s.once.Do(func() { close(s.gone) }) }

// hub fans events out to the open pages of each user (by channel, which is
// the user's name). Publishing never blocks.
type hub struct {
	mu     sync.Mutex
	subs   map[string]map[*subscriber]struct{}
	closed bool
}

func newHub() *hub { return &hub{subs: make(map[string]map[*subscriber]struct{})} }

// subscribe opens a stream for channel; the caller must unsubscribe.
func (h *hub) subscribe(channel string) *subscriber {
	s := &subscriber{ch: make(chan event, subscriberBuffer), gone: make(chan struct{})}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		s.drop()
		return s
	}
	if h.subs[channel] == nil {
		h.subs[channel] = make(map[*subscriber]struct{})
	}
	h.subs[channel][s] = struct{}{}
	return s
}

func (h *hub) unsubscribe(channel string, s *subscriber) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.subs[channel], s)
	if len(h.subs[channel]) == 0 {
		delete(h.subs, channel)
	}
}

// publish hands ev to every stream of channel; a stream whose buffer is
// full is dropped instead of waited for.
func (h *hub) publish(channel string, ev event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range h.subs[channel] {
		select {
		case s.ch <- ev:
		default:
			s.drop()
			delete(h.subs[channel], s)
		}
	}
}

// close drops every stream, now and later.
func (h *hub) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	for _, subs := range h.subs {
		for s := range subs {
			s.drop()
		}
	}
	h.subs = make(map[string]map[*subscriber]struct{})
}
