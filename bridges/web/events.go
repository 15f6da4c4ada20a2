package web

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/agentbridge/agentbridge/store"
)

// heartbeat keeps idle event streams (and proxies) from timing out.
const heartbeat = 20 * time.Second

// events streams a conversation's changes as server-sent events:
//
//	event: msg     id: <version>  data: {"id","seq","html"}  a message added or edited
//	event: typing                 data: {"on":bool}          a turn runs / ended
//	event: notice                 data: {"text"}             a private notice
//
// It first sends every message changed after the version the page has
// (the Last-Event-ID of a reconnect, or ?since= of the first connect) and
// the turn state, so nothing between page load and reconnect is lost. It
// ends when the client goes, when it falls too far behind (it reconnects
// and catches up) or when the console shuts down.
func (c *Console) events(w http.ResponseWriter, r *http.Request) {
	key, ok := c.keyOf(w, r)
	if !ok {
		return
	}
	since, _ := strconv.ParseInt(r.URL.Query().Get("since"), 10, 64)
	if id := r.Header.Get("Last-Event-ID"); id != "" {
		since, _ = strconv.ParseInt(id, 10, 64)
	}
	sub := c.hub.subscribe(key.Channel) // before reading the store: nothing falls in between
	defer c.hub.unsubscribe(key.Channel, sub)

	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("X-Accel-Buffering", "no") // nginx: do not buffer the stream
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	csrf := CSRFToken(r)
	var buf bytes.Buffer
	buf.WriteString("retry: 1000\n\n")
	msgs, err := c.st.WebMessages(r.Context(), store.ConversationKey(key), since, 0)
	if err != nil {
		c.log.Error("read web conversation for a stream", "key", key, "err", err)
		return
	}
	for _, m := range msgs {
		since = c.writeMessage(&buf, m, csrf, since)
	}
	writeEvent(&buf, "typing", "", map[string]bool{"on": c.working(key)})
	if _, err := buf.WriteTo(w); err != nil || rc.Flush() != nil {
		return
	}
	tick := time.NewTicker(heartbeat)
	defer tick.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-sub.gone:
			return
		case <-tick.C:
			buf.WriteString(": ping\n\n")
		case ev := <-sub.ch:
			switch {
			case ev.kind == evMessage && ev.thread == key.Thread && ev.msg.Version > since:
				since = c.writeMessage(&buf, ev.msg, csrf, since)
			case ev.kind == evTyping && ev.thread == key.Thread:
				writeEvent(&buf, "typing", "", map[string]bool{"on": ev.on})
			case ev.kind == evNotice && (ev.thread == key.Thread || ev.thread == ""):
				writeEvent(&buf, "notice", "", map[string]string{"text": ev.text})
			default:
				continue
			}
		}
		if _, err := buf.WriteTo(w); err != nil || rc.Flush() != nil {
			return
		}
	}
}

// writeMessage renders m as a msg event and returns the new last version.
func (c *Console) writeMessage(buf *bytes.Buffer, m store.WebMessage, csrf string, since int64) int64 {
	var html bytes.Buffer
	if err := c.pages["chat"].ExecuteTemplate(&html, "message", c.view(m, csrf)); err != nil {
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
