package slackfake

import (
	"encoding/json"
	"net/http"
	"net/url"
	"sort"
	"strconv"
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

// conversationLocked answers conversations.replies (a thread: its parent
// and replies, oldest first) and conversations.history (the channel's
// top-level messages, newest first). Only the bot's own messages are
// kept by the fake (users' messages are events only). Metadata is
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
	var list []Message
	for _, m := range s.messages {
		if m.Channel != ch {
			continue
		}
		if method == "conversations.replies" && m.TS != thread && m.ThreadTS != thread ||
			method == "conversations.history" && m.ThreadTS != "" && m.ThreadTS != m.TS {
			continue
		}
		list = append(list, *m)
	}
	sort.Slice(list, func(i, j int) bool {
		if method == "conversations.history" {
			return list[i].TS > list[j].TS
		}
		return list[i].TS < list[j].TS
	})
	limit, _ := strconv.Atoi(p.Get("limit"))
	if limit <= 0 {
		limit = 100
	}
	limit = min(limit, 1000)
	from, _ := strconv.Atoi(p.Get("cursor"))
	from = min(max(from, 0), len(list))
	to := min(from+limit, len(list))
	withMeta := p.Get("include_all_metadata") == "1" || p.Get("include_all_metadata") == "true"
	msgs := make([]map[string]any, 0, to-from)
	for _, m := range list[from:to] {
		out := botMessage(m)
		if withMeta && m.Metadata != nil {
			out["metadata"] = m.Metadata
		}
		msgs = append(msgs, out)
	}
	next := ""
	if to < len(list) {
		next = strconv.Itoa(to)
	}
	return ok(map[string]any{"messages": msgs, "has_more": next != "",
		"response_metadata": map[string]any{"next_cursor": next}})
}
