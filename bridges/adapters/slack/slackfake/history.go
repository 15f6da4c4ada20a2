package slackfake

import (
	"encoding/json"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"sync"
)

// Metadata is a message's metadata (chat.postMessage "metadata").
type Metadata struct {
	EventType    string         `json:"event_type"`
	EventPayload map[string]any `json:"event_payload"`
}

// LoseResponses makes the next n calls of a Web API method run as usual
// (a chat.postMessage is stored and shows in the conversation) while
// their answer is lost on the way back: with status 0 the connection is
// closed without a response, otherwise the answer is that HTTP status
// (e.g. 502) with an HTML body, as a proxy in front of Slack would send.
func (s *Server) LoseResponses(method string, n, status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lost == nil {
		s.lost = map[string]lostResponse{}
	}
	if n <= 0 {
		delete(s.lost, method)
		return
	}
	s.lost[method] = lostResponse{n: n, status: status}
}

// HoldResponse holds the answer of the next call of method whose
// arguments match: the call runs as usual (a chat.postMessage is stored
// and shows in the conversation), then its answer waits until release is
// called or the client goes away — the moment to kill a bridge inside the
// call. reached is closed when the call arrived. One call is held.
func (s *Server) HoldResponse(method string, match func(url.Values) bool) (reached <-chan struct{}, release func()) {
	h := &heldCall{method: method, match: match, reached: make(chan struct{}), release: make(chan struct{})}
	s.mu.Lock()
	s.holds = append(s.holds, h)
	s.mu.Unlock()
	var once sync.Once
	return h.reached, func() { once.Do(func() { close(h.release) }) }
}

// heldCall is a HoldResponse waiting for its call.
type heldCall struct {
	method  string
	match   func(url.Values) bool
	reached chan struct{}
	release chan struct{}
}

// holdLocked returns the HoldResponse that holds this call, removing it,
// or nil. s.mu is held.
func (s *Server) holdLocked(method string, params url.Values) *heldCall {
	for i, h := range s.holds {
		if h.method == method && h.match(params) {
			s.holds = append(s.holds[:i], s.holds[i+1:]...)
			return h
		}
	}
	return nil
}

type lostResponse struct {
	n      int
	status int // 0: close the connection
}

// loseLocked reports whether the answer to this call of method is lost,
// and how (see LoseResponses). s.mu is held.
func (s *Server) loseLocked(method string) (lost bool, status int) {
	l, ok := s.lost[method]
	if !ok || l.n <= 0 {
		return false, 0
	}
	l.n--
	if l.n == 0 {
		delete(s.lost, method)
	} else {
		s.lost[method] = l
	}
	return true, l.status
}

// writeLost answers a call whose response is lost.
func writeLost(w http.ResponseWriter, status int) {
	if status == 0 {
		panic(http.ErrAbortHandler) // the server closes the connection unanswered
	}
	w.Header().Set("Content-Type", "text/html")
	w.WriteHeader(status)
	_, _ = w.Write([]byte("<html><body>Bad Gateway</body></html>"))
}

// parseMetadata reads chat.postMessage's metadata argument ("" = none).
func parseMetadata(raw string) (*Metadata, apiResult) {
	if raw == "" {
		return nil, apiResult{}
	}
	var md Metadata
	if err := json.Unmarshal([]byte(raw), &md); err != nil || md.EventType == "" {
		return nil, fail("invalid_metadata_format")
	}
	if md.EventPayload == nil {
		md.EventPayload = map[string]any{}
	}
	return &md, apiResult{}
}

// userMsg is a user's message as Send delivered it, kept for the
// conversations.* methods.
type userMsg struct {
	channel, ts, threadTS string
	wire                  map[string]any
}

// listed is one message of a conversations.* answer.
type listed struct {
	ts   string
	wire map[string]any
}

// conversationLocked answers conversations.replies (a thread: its parent
// and replies, oldest first) and conversations.history (the channel's
// top-level messages, newest first): the bot's messages and the users'
// messages Send delivered (not edits or deletions). Metadata is
// returned only with include_all_metadata, as Slack does. Paging: limit
// (default 100, at most 1,000) and cursor (an offset) with has_more and
// response_metadata.next_cursor. s.mu is held.
func (s *Server) conversationLocked(method string, p url.Values) apiResult {
	ch := p.Get("channel")
	if ch == "" {
		return fail("channel_not_found")
	}
	thread := p.Get("ts")
	if method == "conversations.replies" && thread == "" {
		return fail("thread_not_found")
	}
	var list []listed
	keep := func(ts, threadTS string) bool {
		if method == "conversations.replies" {
			return ts == thread || threadTS == thread
		}
		return threadTS == "" || threadTS == ts
	}
	withMeta := p.Get("include_all_metadata") == "1" || p.Get("include_all_metadata") == "true"
	for _, m := range s.messages {
		if m.Channel != ch || !keep(m.TS, m.ThreadTS) {
			continue
		}
		out := botMessage(*m)
		if withMeta && m.Metadata != nil {
			out["metadata"] = m.Metadata
		}
		list = append(list, listed{ts: m.TS, wire: out})
	}
	for _, m := range s.userMsgs {
		if m.channel == ch && keep(m.ts, m.threadTS) {
			list = append(list, listed{ts: m.ts, wire: clone(m.wire)})
		}
	}
	sort.Slice(list, func(i, j int) bool {
		if method == "conversations.history" {
			return list[i].ts > list[j].ts
		}
		return list[i].ts < list[j].ts
	})
	limit, _ := strconv.Atoi(p.Get("limit"))
	if limit <= 0 {
		limit = 100
	}
	limit = min(limit, 1000)
	from, _ := strconv.Atoi(p.Get("cursor"))
	from = min(max(from, 0), len(list))
	to := min(from+limit, len(list))
	msgs := make([]map[string]any, 0, to-from)
	for _, m := range list[from:to] {
		msgs = append(msgs, m.wire)
	}
	next := ""
	if to < len(list) {
		next = strconv.Itoa(to)
	}
	return ok(map[string]any{"messages": msgs, "has_more": next != "",
		"response_metadata": map[string]any{"next_cursor": next}})
}
