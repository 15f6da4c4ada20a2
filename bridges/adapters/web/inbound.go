package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/adapters/web/auth"
	"github.com/agentbridge/agentbridge/bridges/adapters/web/feed"
	"github.com/agentbridge/agentbridge/bridges/core/access"
	"github.com/agentbridge/agentbridge/internal/textcut"
	"github.com/agentbridge/agentbridge/store"
)

// maxTextBytes caps the text of one message sent from a page.
const maxTextBytes = 32 << 10

// send delivers a message (and an optional image) to the core.
func (c *Console) send(w http.ResponseWriter, r *http.Request) {
	cv, ok := c.conversationOf(w, r, access.Write)
	if !ok {
		return
	}
	key := cv.key
	text := strings.TrimSpace(r.FormValue("text"))
	if len(text) > maxTextBytes {
		http.Error(w, fmt.Sprintf("message too long: at most %d KB of text; send longer text as a file", maxTextBytes>>10), http.StatusRequestEntityTooLarge)
		return
	}
	up, status, msg := c.readUpload(r, key)
	if status != 0 {
		http.Error(w, msg, status)
		return
	}
	if text == "" && up == nil {
		http.Error(w, "empty message", http.StatusBadRequest)
		return
	}
	c.hand(w, r, key, text, up, true)
}

// stop interrupts the running turn: the Stop button (or Esc) sends
// "!stop", with that command's authorisation. The command is not shown in
// the conversation: the page shows the stop as the turn's state.
func (c *Console) stop(w http.ResponseWriter, r *http.Request) {
	cv, ok := c.conversationOf(w, r, access.Write)
	if !ok {
		return
	}
	c.hand(w, r, cv.key, bridges.CommandPrefix+"stop", nil, false)
}

// hand hands the user's message to the core; shown, it is first recorded
// in the conversation's history, and its pages say the agent starts until
// a turn runs or the bridge answers (startTurn). People the bot's access list does not
// name get 403 and nothing is recorded (the core still counts the
// refusal).
func (c *Console) hand(w http.ResponseWriter, r *http.Request, key bridges.ConversationKey, text string, up *store.WebUpload, shown bool) {
	h := c.coreHandler()
	if h == nil {
		http.Error(w, "the bridge is not running yet; try again in a moment", http.StatusServiceUnavailable)
		return
	}
	user := auth.CurrentUser(r).Name
	in := bridges.Inbound{Key: key, MsgID: "u" + randomID(10), UserID: user, UserName: user, Text: text, At: time.Now()}
	if !h.Allowed(key, user) {
		if err := h.HandleMessage(r.Context(), in); err != nil {
			c.log.Warn("refused web message", "key", key, "user", user, "err", err)
		}
		http.Error(w, "Sorry, you don't have access to this bot.", http.StatusForbidden)
		return
	}
	row := store.WebMessage{ID: in.MsgID, Key: store.ConversationKey(key), Author: user, Text: text}
	if up != nil {
		if err := c.st.AddWebUpload(r.Context(), *up); err != nil {
			c.log.Error("store web upload", "key", key, "err", err)
			http.Error(w, "the image could not be stored", http.StatusInternalServerError)
			return
		}
		in.Files = []bridges.File{{ID: up.ID, Name: up.Name, MimeType: up.MimeType, Size: int64(len(up.Data))}}
		row.Files, _ = json.Marshal(in.Files) // plain strings: cannot fail
	}
	if shown {
		stored, err := c.st.AddWebMessage(r.Context(), row)
		if err != nil {
			c.log.Error("store web message", "key", key, "msg_id", in.MsgID, "err", err)
			http.Error(w, "the message could not be stored", http.StatusInternalServerError)
			return
		}
		c.hub.Publish(r.Context(), feed.ThreadTopic(key.Thread), feed.Event{Kind: feed.Message, Thread: key.Thread, Msg: stored})
		c.listChanged(r.Context(), key)
	}
	// Marked before the core has it: its turn may begin (and end the start) at once.
	started := shown && c.startTurn(r.Context(), key, text)
	if err := h.HandleMessage(r.Context(), in); err != nil {
		if started {
			c.endStart(r.Context(), key)
		}
		c.log.Error("web message not accepted", "key", key, "msg_id", in.MsgID, "err", err)
		c.notice(r.Context(), key, "⚠️ Your last message could not be accepted ("+textcut.OneLine(err.Error(), 120)+"). Please send it again.")
		http.Error(w, "the message was not accepted", http.StatusInternalServerError)
		return
	}
	c.done(w, r, key)
}

// action hands a click on a card's button to the core, which checks who
// may decide it; its private answers become notices on the user's page.
func (c *Console) action(w http.ResponseWriter, r *http.Request) {
	cv, ok := c.conversationOf(w, r, access.Decide)
	if !ok {
		return
	}
	key := cv.key // the cards then decide who may decide (the turn's requester, approvers, admins)
	h := c.coreHandler()
	if h == nil {
		http.Error(w, "the bridge is not running yet; try again in a moment", http.StatusServiceUnavailable)
		return
	}
	card, choice := r.PostFormValue("card"), r.PostFormValue("choice")
	if card == "" || choice == "" {
		http.Error(w, "card and choice are required", http.StatusBadRequest)
		return
	}
	user := auth.CurrentUser(r).Name
	err := h.HandleAction(r.Context(), bridges.Action{
		Key: key, CardID: card, Choice: choice, UserID: user, UserName: user,
		Reply: func(ctx context.Context, text string) error { return c.PostEphemeral(ctx, key, user, text) },
	})
	if err != nil {
		c.log.Warn("web click not accepted", "key", key, "user", user, "err", err)
		http.Error(w, "the click was not accepted; try again", http.StatusServiceUnavailable)
		return
	}
	c.done(w, r, key)
}

// done answers a successful POST: 204 to the page's script, else back to
// the conversation.
func (c *Console) done(w http.ResponseWriter, r *http.Request, key bridges.ConversationKey) {
	if wantsJSON(r) {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	http.Redirect(w, r, "/chat/"+key.Thread, http.StatusSeeOther)
}
