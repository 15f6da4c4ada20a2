package web

import (
	"context"
	"net/http"
	"regexp"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/adapters/web/auth"
	"github.com/agentbridge/agentbridge/bridges/adapters/web/feed"
	"github.com/agentbridge/agentbridge/bridges/core/access"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/store"
)

// threadRE matches a web conversation's thread id.
var threadRE = regexp.MustCompile(`^[a-z0-9]{8,64}$`)

// conv is a web conversation as the signed-in person sees it, with what
// the access decision (package access) said about them there.
type conv struct {
	key bridges.ConversationKey // Channel is the owner's name
	// role is the viewer's: store.WebOwner (also for a conversation not
	// started yet), store.WebParticipant or store.WebViewer.
	role   string
	exists bool // it has messages (a new one exists once its first is sent)
	thread store.WebThread
}

// consoleConfig offers the console's config in force as a config.Source
// (the default authority's, when the bridge gives none).
type consoleConfig struct{ c *Console }

func (cc consoleConfig) Current() *config.Config { return cc.c.config() }

// person is the request's signed-in person for the access decision: their
// session must still hold at each decision (signed out, a removed user or
// a changed token end it).
func (c *Console) person(r *http.Request) access.Person {
	p := access.Person{Via: access.ViaWeb, Name: auth.CurrentUser(r).Name}
	if s := auth.SessionOf(r); s != nil {
		value := s.Value
		p.Valid = func(ctx context.Context) bool { return c.sess.Check(ctx, value) != nil }
	}
	return p
}

// conversationOf returns the conversation of the request's {thread} when
// the signed-in person may act on it (act), answering itself otherwise:
// 404 when they may not see it at all (the same answer as for no such
// conversation, so ids of others' conversations are not told), 403 when
// they see it but may not act. A thread id unused so far is a new
// conversation of the person's own.
func (c *Console) conversationOf(w http.ResponseWriter, r *http.Request, act access.Action) (conv, bool) {
	thread := r.PathValue("thread")
	bot := c.bot.Load()
	if bot == nil || !threadRE.MatchString(thread) {
		c.notFound(w, r)
		return conv{}, false
	}
	p := c.person(r)
	cv := access.Conv{Key: bridges.ConversationKey{Bot: bot.Name, Thread: thread}}
	d, err := c.access.Decide(r.Context(), p, cv, act)
	if err != nil {
		c.log.Error("decide access to a web conversation", "thread", thread, "err", err)
		c.errorPage(w, r, http.StatusInternalServerError, "The conversation could not be read.")
		return conv{}, false
	}
	if !d.Allowed {
		if d.BotRefuses {
			http.Error(w, "Sorry, you don't have access to this bot.", http.StatusForbidden)
			return conv{}, false
		}
		if act != access.See && c.access.May(r.Context(), p, cv, access.See) {
			c.log.Info("web action refused", "thread", thread, "user", p.Name, "action", act, "why", d.Why)
			http.Error(w, refusalText(act), http.StatusForbidden)
			return conv{}, false
		}
		c.notFound(w, r)
		return conv{}, false
	}
	return conv{key: d.Key, role: string(d.Role), exists: d.Exists, thread: d.Thread}, true
}

// refusalText tells a person who sees a conversation why they may not act.
func refusalText(act access.Action) string {
	switch act {
	case access.Write:
		return "This conversation is shared with you to read: only its owner and participants write in it or stop its turns."
	case access.Manage:
		return "Only the person who started this conversation can change it."
	}
	return "You may not do this in this conversation."
}

// mayWrite reports whether the viewer may send messages and stop turns
// (what the page offers; each request is decided again).
func (cv conv) mayWrite() bool { return cv.role == store.WebOwner || cv.role == store.WebParticipant }

// owns reports whether the viewer started the conversation.
func (cv conv) owns() bool { return cv.role == store.WebOwner }

// notFound answers 404: there is no such conversation, or not for this
// person (the same answer, so ids of others' conversations are not told).
func (c *Console) notFound(w http.ResponseWriter, r *http.Request) {
	if wantsJSON(r) || r.Header.Get("Accept") == "text/event-stream" {
		http.Error(w, "There is no such conversation.", http.StatusNotFound)
		return
	}
	c.errorPage(w, r, http.StatusNotFound, "There is no such conversation.")
}

// listChanged tells the open pages of the conversation's owner and of the
// teammates it is shared with that their conversation lists changed, and
// open streams to ask the access decision again.
func (c *Console) listChanged(ctx context.Context, key bridges.ConversationKey) {
	c.access.Changed()
	c.hub.Publish(ctx, feed.UserTopic(key.Channel), feed.Event{Kind: feed.List})
	shares, err := c.st.WebThreadShares(ctx, key.Bot, key.Thread)
	if err != nil {
		c.log.Warn("list the teammates of a web conversation", "key", key, "err", err)
		return
	}
	for _, sh := range shares {
		c.hub.Publish(ctx, feed.UserTopic(sh.Member), feed.Event{Kind: feed.List})
	}
}
