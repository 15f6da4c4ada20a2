package web

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/access"
	"github.com/agentbridge/agentbridge/bridges/web/auth"
	"github.com/agentbridge/agentbridge/store"
)

// heartbeat keeps idle event streams (and proxies) from timing out.
const heartbeat = 20 * time.Second

// events streams a conversation's changes as server-sent events:
//
//	event: msg     id: <version>  data: {"id","seq","html"}  a message added or edited
//	event: typing                 data: {"on","starting"}    a turn runs / the agent starts / neither
//	event: notice                 data: {"text"}             a private notice
//	event: list                   data: {}                   the viewer's conversation list changed
//	event: ended                  data: {"text","next"}      access ended: the last event; go to next
//
// It first sends every message changed after the version the page has
// (the Last-Event-ID of a reconnect, or ?since= of the first connect) and
// the turn state, so nothing between page load and reconnect is lost. It
// ends when the client goes, when it falls too far behind (it reconnects
// and catches up) or when the console shuts down; and, with an "ended"
// event, when the person may no longer see the conversation: the access
// decision is asked before each event and again at each change of
// access and every access.RecheckEvery.
func (c *Console) events(w http.ResponseWriter, r *http.Request) {
	cv, ok := c.conversationOf(w, r, access.See)
	if !ok {
		return
	}
	key, viewer := cv.key, auth.CurrentUser(r).Name
	since, _ := strconv.ParseInt(r.URL.Query().Get("since"), 10, 64)
	if id := r.Header.Get("Last-Event-ID"); id != "" {
		since, _ = strconv.ParseInt(id, 10, 64)
	}
	// Subscribe before reading the store: nothing falls in between.
	sub := c.hub.subscribe(threadTopic(key.Thread), userTopic(viewer))
	defer c.hub.unsubscribe(sub)

	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("X-Accel-Buffering", "no") // nginx: do not buffer the stream
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	csrf, decide := auth.CSRFToken(r), c.mayDecide(cv, viewer)
	var buf bytes.Buffer
	buf.WriteString("retry: 1000\n\n")
	msgs, err := c.st.WebMessages(r.Context(), store.ConversationKey(key), since, 0)
	if err != nil {
		c.log.Error("read web conversation for a stream", "key", key, "err", err)
		return
	}
	for _, m := range msgs {
		since = c.writeMessage(&buf, m, csrf, decide, since)
	}
	writeEvent(&buf, "typing", "", turnData(c.turn(key)))
	if _, err := buf.WriteTo(w); err != nil || rc.Flush() != nil {
		return
	}
	tick := time.NewTicker(heartbeat)
	defer tick.Stop()
	ended := c.access.Watch(r.Context(), c.person(r), access.Conv{Key: key}, access.See)
	for {
		select {
		case <-r.Context().Done():
			return
		case <-ended:
			c.endStream(w, rc, r, "the conversation")
			return
		case <-sub.gone:
			return
		case <-tick.C:
			buf.WriteString(": ping\n\n")
		case ev := <-sub.ch:
			if !c.access.May(r.Context(), c.person(r), access.Conv{Key: key}, access.See) {
				c.endStream(w, rc, r, "the conversation") // asked again before each delivery
				return
			}
			switch {
			case ev.kind == evMessage && ev.thread == key.Thread && ev.msg.Version > since:
				since = c.writeMessage(&buf, ev.msg, csrf, decide, since)
			case ev.kind == evTyping && ev.thread == key.Thread:
				writeEvent(&buf, "typing", "", turnData(ev.on, ev.starting))
			case ev.kind == evNotice && ev.user == viewer && (ev.thread == key.Thread || ev.thread == ""):
				writeEvent(&buf, "notice", "", map[string]string{"text": ev.text})
			case ev.kind == evList:
				writeEvent(&buf, "list", "", struct{}{})
			default:
				continue
			}
		}
		if _, err := buf.WriteTo(w); err != nil || rc.Flush() != nil {
			return
		}
	}
}

// endStream ends an event stream whose person may no longer see what it
// shows (a share ended or changed, the conversation archived or deleted,
// signed out, removed from web.users): a final "ended" event sends the
// page to the conversation list, or to sign-in when the session ended.
func (c *Console) endStream(w http.ResponseWriter, rc *http.ResponseController, r *http.Request, what string) {
	if r.Context().Err() != nil {
		return
	}
	next := "/"
	if p := c.person(r); p.Valid != nil && !p.Valid(r.Context()) {
		next = "/signin"
	}
	c.log.Info("web event stream ended: access ended", "user", auth.CurrentUser(r).Name, "path", r.URL.Path)
	var buf bytes.Buffer
	writeEvent(&buf, "ended", "", map[string]string{"text": "Your access to " + what + " ended.", "next": next})
	if _, err := buf.WriteTo(w); err == nil {
		_ = rc.Flush()
	}
}

// writeMessage renders m as a msg event and returns the new last version.
func (c *Console) writeMessage(buf *bytes.Buffer, m store.WebMessage, csrf string, decide bool, since int64) int64 {
	var html bytes.Buffer
	if err := c.pages["chat"].ExecuteTemplate(&html, "message", c.view(m, csrf, decide)); err != nil {
		c.log.Error("render web message", "msg_id", m.ID, "err", err)
		return since
	}
	writeEvent(buf, "msg", strconv.FormatInt(m.Version, 10), map[string]any{"id": m.ID, "seq": m.Seq, "html": html.String()})
	return max(since, m.Version)
}

// writeEvent appends one server-sent event; data is JSON (one line).
func writeEvent(buf *bytes.Buffer, name, id string, data any) {
	b, err := json.Marshal(data)
	if err != nil {
		b = []byte("{}")
	}
	if id != "" {
		fmt.Fprintf(buf, "id: %s\n", id)
	}
	fmt.Fprintf(buf, "event: %s\ndata: %s\n\n", name, b)
}

// subscriberBuffer is how many events a page may lag behind before its
// stream is ended; the page reconnects and catches up from the store.
const subscriberBuffer = 64

// eventKind says what an event carries.
type eventKind int

const (
	evMessage eventKind = iota // a message was added or edited
	evTyping                   // a turn started or ended, or the agent starts
	evNotice                   // a private notice for the user
	evList                     // a conversation list changed
)

// event is one change for the pages of a conversation (published on its
// threadTopic) or of a person (userTopic).
type event struct {
	kind     eventKind
	thread   string                  // the conversation; "" for a notice about the whole channel
	user     string                  // evNotice: the only person who sees it
	msg      store.WebMessage        // evMessage
	on       bool                    // evTyping: a turn runs
	starting bool                    // evTyping: no turn runs yet, the agent starts
	key      bridges.ConversationKey // evTyping: the conversation (the other replicas note its state)
	text     string                  // evNotice
}

// subscriber is one open event stream. gone is closed when the hub drops
// it (it fell behind, or the console shuts down).
type subscriber struct {
	ch     chan event
	gone   chan struct{}
	once   sync.Once
	topics []string
}

func (s *subscriber) drop() { s.once.Do(func() { close(s.gone) }) }

// threadTopic is the topic of one conversation's pages; userTopic that of
// every page of one person (their conversation list, their notices).
func threadTopic(thread string) string { return "t:" + thread }
func userTopic(user string) string     { return "u:" + user }

// hub fans events out to the open pages by topic. Publishing never blocks.
type hub struct {
	mu     sync.Mutex
	subs   map[string]map[*subscriber]struct{}
	closed bool
}

func newHub() *hub { return &hub{subs: make(map[string]map[*subscriber]struct{})} }

// subscribe opens a stream for topics; the caller must unsubscribe.
func (h *hub) subscribe(topics ...string) *subscriber {
	s := &subscriber{ch: make(chan event, subscriberBuffer), gone: make(chan struct{}), topics: topics}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		s.drop()
		return s
	}
	for _, t := range topics {
		if h.subs[t] == nil {
			h.subs[t] = make(map[*subscriber]struct{})
		}
		h.subs[t][s] = struct{}{}
	}
	return s
}

func (h *hub) unsubscribe(s *subscriber) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.remove(s)
}

// remove takes s off its topics; h.mu is held.
func (h *hub) remove(s *subscriber) {
	for _, t := range s.topics {
		delete(h.subs[t], s)
		if len(h.subs[t]) == 0 {
			delete(h.subs, t)
		}
	}
}

// publish hands ev to every stream of topic; a stream whose buffer is
// full is dropped instead of waited for.
func (h *hub) publish(topic string, ev event) {
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
func (h *hub) has(topic string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.subs[topic]) > 0
}

// dropAll drops every open stream (their pages reconnect and catch up
// from the store); later ones are kept.
func (h *hub) dropAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, subs := range h.subs {
		for s := range subs {
			s.drop()
		}
	}
	h.subs = make(map[string]map[*subscriber]struct{})
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
