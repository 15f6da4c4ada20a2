package web

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/adapters/web/auth"
	"github.com/agentbridge/agentbridge/bridges/adapters/web/feed"
	"github.com/agentbridge/agentbridge/bridges/core/access"
	"github.com/agentbridge/agentbridge/internal/textcut"
	"github.com/agentbridge/agentbridge/store"
)

// Managing a conversation: only its owner renames, archives, deletes and
// shares it. Every action is a CSRF-checked POST that sends the page back
// to the conversation (to the list after a delete) and refreshes the
// conversation lists of everybody who sees it.

// ownConv is conversationOf for managing an existing conversation (its
// owner only); it answers 403 to teammates and 404 for a conversation
// without messages.
func (c *Console) ownConv(w http.ResponseWriter, r *http.Request) (conv, bool) {
	cv, ok := c.conversationOf(w, r, access.Manage)
	switch {
	case !ok:
		return conv{}, false
	case !cv.exists:
		c.notFound(w, r)
		return conv{}, false
	}
	return cv, true
}

// rename sets the conversation's title (form field "title"; empty goes
// back to the first message).
func (c *Console) rename(w http.ResponseWriter, r *http.Request) {
	cv, ok := c.ownConv(w, r)
	if !ok {
		return
	}
	title := textcut.OneLine(r.PostFormValue("title"), maxTitleRunes)
	if err := c.st.RenameWebThread(r.Context(), cv.key.Bot, cv.key.Thread, title); err != nil {
		c.failed(w, "rename", cv.key, err)
		return
	}
	c.listChanged(r.Context(), cv.key)
	c.done(w, r, cv.key)
}

// archive archives the conversation (form field archived=1) or restores
// it (archived=0). Archiving stops its agent like an idle eviction: the
// session is kept, and the next message resumes it.
func (c *Console) archive(w http.ResponseWriter, r *http.Request) {
	cv, ok := c.ownConv(w, r)
	if !ok {
		return
	}
	archived := r.PostFormValue("archived") == "1"
	if archived {
		c.stopAgent(r.Context(), cv.key, auth.CurrentUser(r).Name)
	}
	if err := c.st.ArchiveWebThread(r.Context(), cv.key.Bot, cv.key.Thread, archived); err != nil {
		c.failed(w, "archive", cv.key, err)
		return
	}
	c.listChanged(r.Context(), cv.key)
	c.done(w, r, cv.key)
}

// Form values of a delete's field "agent".
const (
	deleteKeepSession   = "keep"   // stop the agent; its session stays (!sessions, !resume)
	deleteRemoveSession = "remove" // the agent forgets the conversation (!new)
)

// deleteConversation deletes the conversation's history, uploads and
// shares. The owner chooses what happens to the agent (field "agent"):
// "keep" stops it and keeps its session, which `!sessions` lists and
// `!resume` brings into another conversation; "remove" gives the
// conversation a fresh session as `!new` does (with that command's
// authority), so the agent's earlier state is no longer used.
func (c *Console) deleteConversation(w http.ResponseWriter, r *http.Request) {
	cv, ok := c.ownConv(w, r)
	if !ok {
		return
	}
	user := auth.CurrentUser(r).Name
	switch r.PostFormValue("agent") {
	case deleteKeepSession:
		c.stopAgent(r.Context(), cv.key, user)
	case deleteRemoveSession:
		if !c.forgetSession(w, r, cv.key) {
			return
		}
	default:
		http.Error(w, `choose what happens to the agent: agent=keep or agent=remove`, http.StatusBadRequest)
		return
	}
	shares, err := c.st.WebThreadShares(r.Context(), cv.key.Bot, cv.key.Thread)
	if err != nil {
		c.failed(w, "delete", cv.key, err)
		return
	}
	if err := c.st.DeleteWebThread(r.Context(), cv.key.Bot, cv.key.Thread); err != nil {
		c.failed(w, "delete", cv.key, err)
		return
	}
	c.log.Info("web conversation deleted", "key", cv.key, "user", user, "agent", r.PostFormValue("agent"))
	c.access.Changed()
	c.hub.Publish(r.Context(), feed.UserTopic(cv.key.Channel), feed.Event{Kind: feed.List})
	for _, sh := range shares {
		c.hub.Publish(r.Context(), feed.UserTopic(sh.Member), feed.Event{Kind: feed.List})
	}
	if wantsJSON(r) {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

// forgetSession hands the core a hidden `!new` from the owner; false when
// it answered the request itself.
func (c *Console) forgetSession(w http.ResponseWriter, r *http.Request, key bridges.ConversationKey) bool {
	h := c.coreHandler()
	if h == nil {
		http.Error(w, "the bridge is not running yet; try again in a moment", http.StatusServiceUnavailable)
		return false
	}
	user := auth.CurrentUser(r).Name
	if !h.Allowed(key, user) {
		http.Error(w, "Sorry, you don't have access to this bot.", http.StatusForbidden)
		return false
	}
	before, err := c.st.GetConversation(r.Context(), store.ConversationKey(key))
	if errors.Is(err, store.ErrNotFound) {
		return true // the core never saw it: no session to forget
	}
	if err != nil {
		c.failed(w, "delete", key, err)
		return false
	}
	in := bridges.Inbound{Key: key, MsgID: "u" + randomID(10), UserID: user, UserName: user, Text: bridges.CommandPrefix + "new", At: time.Now()}
	if err := h.HandleMessage(r.Context(), in); err != nil {
		c.log.Error("web delete: !new not accepted", "key", key, "err", err)
		http.Error(w, "the agent's session could not be removed; nothing was deleted", http.StatusInternalServerError)
		return false
	}
	// The conversation is deleted only once the core has run the !new: the
	// access decision it asks then refuses everyone in a deleted
	// conversation, the owner's !new included.
	ctx, cancel := context.WithTimeout(r.Context(), forgetWait)
	defer cancel()
	for {
		after, err := c.st.GetConversation(ctx, store.ConversationKey(key))
		if err == nil && after.SessionID != before.SessionID {
			return true
		}
		select {
		case <-ctx.Done():
			c.log.Warn("web delete: the agent's session was not removed in time", "key", key, "wait", forgetWait)
			http.Error(w, "the agent's session is still being removed; nothing was deleted yet, try again in a moment", http.StatusServiceUnavailable)
			return false
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// forgetWait bounds how long a delete that removes the agent's session
// waits for the core to have run its !new.
const forgetWait = 30 * time.Second

// stopAgent stops the conversation's live agent process, if any (its
// session is kept). Problems are logged: the archive or delete goes on.
func (c *Console) stopAgent(ctx context.Context, key bridges.ConversationKey, by string) {
	if c.op == nil {
		return
	}
	conv, err := c.st.GetConversation(ctx, store.ConversationKey(key))
	if errors.Is(err, store.ErrNotFound) {
		return // the core never saw it
	}
	if err == nil {
		err = c.op.StopAgent(ctx, conv.ID, by)
	}
	if err != nil {
		c.log.Warn("stop the agent of a web conversation", "key", key, "err", err)
	}
}

// share shares the conversation with a web user (form fields "member" and
// "role": viewer or participant; an empty role ends the share).
func (c *Console) share(w http.ResponseWriter, r *http.Request) {
	cv, ok := c.ownConv(w, r)
	if !ok {
		return
	}
	member, role := r.PostFormValue("member"), r.PostFormValue("role")
	switch {
	case c.config().WebUser(member) == nil || member == cv.key.Channel:
		http.Error(w, "share with one of the console's other users (web.users)", http.StatusBadRequest)
		return
	case role != "" && role != store.WebViewer && role != store.WebParticipant:
		http.Error(w, "role must be viewer or participant", http.StatusBadRequest)
		return
	}
	if err := c.st.ShareWebThread(r.Context(), cv.key.Bot, cv.key.Thread, member, role); err != nil {
		c.failed(w, "share", cv.key, err)
		return
	}
	c.log.Info("web conversation shared", "key", cv.key, "user", auth.CurrentUser(r).Name, "member", member, "role", role)
	c.listChanged(r.Context(), cv.key)
	c.hub.Publish(r.Context(), feed.UserTopic(member), feed.Event{Kind: feed.List}) // also when the share ended
	c.done(w, r, cv.key)
}

// failed answers 500 for a store error of a conversation action.
func (c *Console) failed(w http.ResponseWriter, what string, key bridges.ConversationKey, err error) {
	c.log.Error("web conversation "+what, "key", key, "err", err)
	http.Error(w, "the conversation could not be changed ("+what+"); try again", http.StatusInternalServerError)
}

// listEvents streams "list" events to a page that shows the person's
// conversation list without a conversation (the start page), and the
// notices meant for all of their pages.
func (c *Console) listEvents(w http.ResponseWriter, r *http.Request) {
	user := auth.CurrentUser(r).Name
	sub := c.hub.Subscribe(feed.UserTopic(user))
	defer c.hub.Unsubscribe(sub)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	var buf bytes.Buffer
	buf.WriteString("retry: 1000\n\n")
	tick := time.NewTicker(feed.Heartbeat)
	defer tick.Stop()
	p := c.person(r)
	ended := c.access.WatchValid(r.Context(), p)
	for {
		if _, err := buf.WriteTo(w); err != nil || rc.Flush() != nil {
			return
		}
		select {
		case <-r.Context().Done():
			return
		case <-ended:
			c.endStream(w, rc, r, "the console")
			return
		case <-sub.Gone():
			return
		case <-tick.C:
			buf.WriteString(": ping\n\n")
		case ev := <-sub.Events():
			switch {
			case ev.Kind == feed.List:
				feed.WriteEvent(&buf, "list", "", struct{}{})
			case ev.Kind == feed.Notice && ev.User == user && ev.Thread == "":
				feed.WriteEvent(&buf, "notice", "", map[string]string{"text": ev.Text})
			}
		}
	}
}

// teammateNames lists the web users other than owner, for the share form.
func (c *Console) teammateNames(owner string) []string {
	var out []string
	for _, u := range c.config().Web.Users {
		if u.Name != owner {
			out = append(out, u.Name)
		}
	}
	return out
}
