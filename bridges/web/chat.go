package web

import (
	"encoding/json"
	"html/template"
	"net/http"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/store"
)

// Chat page limits.
const (
	historyShown = 500 // messages a chat page shows
	threadsShown = 100 // conversations listed
)

// home lists the user's conversations.
func (c *Console) home(w http.ResponseWriter, r *http.Request) {
	data := struct {
		HasBot  bool
		Threads []store.WebThread
	}{HasBot: c.bot != nil}
	if c.bot != nil {
		var err error
		if data.Threads, err = c.st.WebThreads(r.Context(), c.bot.Name, CurrentUser(r).Name, threadsShown); err != nil {
			c.log.Error("list web conversations", "user", CurrentUser(r).Name, "err", err)
		}
	}
	c.render(w, r, http.StatusOK, "home", "chat", data)
}

// newConversation sends the user to a fresh conversation; it exists once
// its first message is sent.
func (c *Console) newConversation(w http.ResponseWriter, r *http.Request) {
	if c.bot == nil {
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	http.Redirect(w, r, "/chat/"+randomID(8), http.StatusSeeOther)
}

// chatPage shows a conversation as it is: its stored messages (open cards
// with their buttons) and whether a turn is running.
func (c *Console) chatPage(w http.ResponseWriter, r *http.Request) {
	key, ok := c.keyOf(w, r)
	if !ok {
		return
	}
	msgs, err := c.st.WebMessages(r.Context(), store.ConversationKey(key), 0, historyShown)
	if err != nil {
		c.log.Error("read web conversation", "key", key, "err", err)
		c.errorPage(w, r, http.StatusInternalServerError, "The conversation could not be read.")
		return
	}
	threads, err := c.st.WebThreads(r.Context(), key.Bot, key.Channel, threadsShown)
	if err != nil {
		c.log.Error("list web conversations", "user", key.Channel, "err", err)
	}
	data := struct {
		Thread, Title string
		Since         int64
		Messages      []msgView
		Threads       []store.WebThread
		Working       bool
		MaxUploadMB   int
	}{Thread: key.Thread, Threads: threads, Working: c.working(key), MaxUploadMB: maxUploadBytes >> 20}
	csrf := CSRFToken(r)
	for _, m := range msgs {
		data.Since = max(data.Since, m.Version)
		data.Messages = append(data.Messages, c.view(m, csrf))
		if data.Title == "" && m.Author != "" {
			data.Title = oneLine(m.Text, 60)
		}
	}
	c.render(w, r, http.StatusOK, "chat", "chat", data)
}

// msgView is one message as the "message" template draws it.
type msgView struct {
	ID, Thread, CSRF string
	Seq              int64
	Mine             bool          // written by a person (shown as typed)
	Author           string        // the person; "" for the bridge
	Text             string        // a person's text
	HTML             template.HTML // the bridge's markdown, sanitised
	CardID           string
	Buttons          []buttonView
	Images           []string // upload ids
	At               time.Time
}

type buttonView struct {
	ID, Label, Class string
}

// view prepares a stored message for a page of the session with csrf.
func (c *Console) view(m store.WebMessage, csrf string) msgView {
	v := msgView{
		ID: m.ID, Thread: m.Key.Thread, CSRF: csrf, Seq: m.Seq, Mine: m.Author != "", Author: m.Author,
		CardID: m.CardID, At: m.CreatedAt,
	}
	if v.Mine {
		v.Text = m.Text
		var files []bridges.File
		if len(m.Files) > 0 && json.Unmarshal(m.Files, &files) == nil {
			for _, f := range files {
				v.Images = append(v.Images, f.ID)
			}
		}
	} else {
		v.HTML = c.md.render(m.Text)
	}
	for _, b := range decodeButtons(m.Buttons) {
		class := ""
		switch b.Style {
		case bridges.StylePrimary:
			class = "primary"
		case bridges.StyleDanger:
			class = "danger"
		}
		v.Buttons = append(v.Buttons, buttonView{b.ID, b.Label, class})
	}
	return v
}
