package web

import (
	"bytes"
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/adapters/web/auth"
	"github.com/agentbridge/agentbridge/bridges/adapters/web/feed"
	"github.com/agentbridge/agentbridge/bridges/core/access"
	"github.com/agentbridge/agentbridge/store"
)

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
	sub := c.hub.Subscribe(feed.ThreadTopic(key.Thread), feed.UserTopic(viewer))
	defer c.hub.Unsubscribe(sub)

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
	feed.WriteEvent(&buf, "typing", "", turnData(c.turn(key)))
	if _, err := buf.WriteTo(w); err != nil || rc.Flush() != nil {
		return
	}
	tick := time.NewTicker(feed.Heartbeat)
	defer tick.Stop()
	ended := c.access.Watch(r.Context(), c.person(r), access.Conv{Key: key}, access.See)
	for {
		select {
		case <-r.Context().Done():
			return
		case <-ended:
			c.endStream(w, rc, r, "the conversation")
			return
		case <-sub.Gone():
			return
		case <-tick.C:
			buf.WriteString(": ping\n\n")
		case ev := <-sub.Events():
			if !c.access.May(r.Context(), c.person(r), access.Conv{Key: key}, access.See) {
				c.endStream(w, rc, r, "the conversation") // asked again before each delivery
				return
			}
			switch {
			case ev.Kind == feed.Message && ev.Thread == key.Thread && ev.Msg.Version > since:
				since = c.writeMessage(&buf, ev.Msg, csrf, decide, since)
			case ev.Kind == feed.Typing && ev.Thread == key.Thread:
				feed.WriteEvent(&buf, "typing", "", turnData(ev.On, ev.Starting))
			case ev.Kind == feed.Notice && ev.User == viewer && (ev.Thread == key.Thread || ev.Thread == ""):
				feed.WriteEvent(&buf, "notice", "", map[string]string{"text": ev.Text})
			case ev.Kind == feed.List:
				feed.WriteEvent(&buf, "list", "", struct{}{})
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
	feed.WriteEvent(&buf, "ended", "", map[string]string{"text": "Your access to " + what + " ended.", "next": next})
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
	feed.WriteEvent(buf, "msg", strconv.FormatInt(m.Version, 10), map[string]any{"id": m.ID, "seq": m.Seq, "html": html.String()})
	return max(since, m.Version)
}

// Fanout runs the live updates across replicas (feed.Hub.Fanout) until
// ctx ends: this console's changes reach the pages of the consoles of the
// other replicas on the same database, and theirs reach its pages, with
// their turns noted for the pages that connect here later. replica is
// this process's replica id.
func (c *Console) Fanout(ctx context.Context, sig feed.Signals, replica string) error {
	return c.hub.Fanout(ctx, sig, replica, feed.Relay{
		Message: c.st.WebMessage,
		Turn: func(key bridges.ConversationKey, on, starting bool) {
			var since time.Time
			if starting {
				since = c.now()
			}
			c.setTurn(key, on, since)
		},
	})
}
