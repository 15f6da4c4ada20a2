package web

import (
	"context"
	"errors"
	"net/http"
	"regexp"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/web/auth"
	"github.com/agentbridge/agentbridge/store"
)

// threadRE matches a web conversation's thread id.
var threadRE = regexp.MustCompile(`^[a-z0-9]{8,64}$`)

// conv is a web conversation as the signed-in person sees it.
type conv struct {
	key bridges.ConversationKey // Channel is the owner's name
	// role is the viewer's: store.WebOwner (also for a conversation not
	// started yet), store.WebParticipant or store.WebViewer.
	role   string
	exists bool // it has messages (a new one exists once its first is sent)
	thread store.WebThread
}

// mayWrite reports whether the viewer may send messages and stop turns.
func (cv conv) mayWrite() bool { return cv.role == store.WebOwner || cv.role == store.WebParticipant }

// owns reports whether the viewer started the conversation: only they
// rename, archive, delete and share it.
func (cv conv) owns() bool { return cv.role == store.WebOwner }

// conversationOf returns the conversation of the request's {thread} for the
// signed-in person, answering 404 itself when there is none they may see:
// one they started, one shared with them, or a new one (its thread id
// unused). Thread ids are random and unique per bot, so the id alone names
// a conversation; the key's channel is always its owner.
func (c *Console) conversationOf(w http.ResponseWriter, r *http.Request) (conv, bool) {
	thread, user := r.PathValue("thread"), auth.CurrentUser(r).Name
	bot := c.bot.Load()
	if bot == nil || !threadRE.MatchString(thread) {
		c.notFound(w, r)
		return conv{}, false
	}
	th, err := c.st.WebThreadFor(r.Context(), bot.Name, thread, user)
	switch {
	case errors.Is(err, store.ErrNotFound):
		deleted, derr := c.st.WebThreadDeleted(r.Context(), bot.Name, thread)
		if derr != nil || deleted {
			if derr != nil {
				c.log.Error("look up a web conversation", "thread", thread, "err", derr)
			}
			c.notFound(w, r)
			return conv{}, false
		}
		return conv{key: bridges.ConversationKey{Bot: bot.Name, Channel: user, Thread: thread}, role: store.WebOwner}, true
	case err != nil:
		c.log.Error("look up a web conversation", "thread", thread, "err", err)
		c.errorPage(w, r, http.StatusInternalServerError, "The conversation could not be read.")
		return conv{}, false
	case th.Role == "":
		c.notFound(w, r)
		return conv{}, false
	}
	return conv{key: bridges.ConversationKey{Bot: bot.Name, Channel: th.Owner, Thread: thread}, role: th.Role, exists: true, thread: th}, true
}

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
// teammates it is shared with that their conversation lists changed.
func (c *Console) listChanged(ctx context.Context, key bridges.ConversationKey) {
	c.publish(ctx, userTopic(key.Channel), event{kind: evList})
	shares, err := c.st.WebThreadShares(ctx, key.Bot, key.Thread)
	if err != nil {
		c.log.Warn("list the teammates of a web conversation", "key", key, "err", err)
		return
	}
	for _, sh := range shares {
		c.publish(ctx, userTopic(sh.Member), event{kind: evList})
	}
}
