package web

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/store"
)

// Chat limits.
const (
	// maxUploadBytes caps an uploaded image (the core forwards at most 5 MiB).
	maxUploadBytes = 5 << 20
	maxTextBytes   = 32 << 10
	historyShown   = 500 // messages a chat page shows
	threadsShown   = 100 // conversations listed
)

// uploadTypes are the image types accepted, by sniffed content.
var uploadTypes = map[string]bool{"image/png": true, "image/jpeg": true, "image/gif": true, "image/webp": true}

var (
	threadRE = regexp.MustCompile(`^[a-z0-9]{8,64}$`)
	fileRE   = regexp.MustCompile(`^f[a-z0-9]{8,64}$`)
)

// keyOf returns the conversation of the request's {thread} for the
// signed-in user, answering 404 itself when there is none.
func (c *Console) keyOf(w http.ResponseWriter, r *http.Request) (bridges.ConversationKey, bool) {
	thread := r.PathValue("thread")
	if c.bot == nil || !threadRE.MatchString(thread) {
		c.errorPage(w, r, http.StatusNotFound, "There is no such conversation.")
		return bridges.ConversationKey{}, false
	}
	return bridges.ConversationKey{Bot: c.bot.Name, Channel: CurrentUser(r).Name, Thread: thread}, true
}

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

// send delivers a message (and an optional image) to the core.
func (c *Console) send(w http.ResponseWriter, r *http.Request) {
	key, ok := c.keyOf(w, r)
	if !ok {
		return
	}
	text := strings.TrimSpace(r.FormValue("text"))
	if len(text) > maxTextBytes {
		http.Error(w, "message too long", http.StatusRequestEntityTooLarge)
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
	if key, ok := c.keyOf(w, r); ok {
		c.hand(w, r, key, bridges.CommandPrefix+"stop", nil, false)
	}
}

// readUpload stores the request's image, if any. A non-zero status refuses
// the request with msg.
func (c *Console) readUpload(r *http.Request, key bridges.ConversationKey) (up *store.WebUpload, status int, msg string) {
	f, hdr, err := r.FormFile("image")
	switch {
	case errors.Is(err, http.ErrMissingFile), errors.Is(err, http.ErrNotMultipart):
		return nil, 0, ""
	case err != nil:
		return nil, http.StatusBadRequest, "bad upload"
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxUploadBytes+1))
	switch {
	case err != nil:
		return nil, http.StatusBadRequest, "bad upload"
	case len(data) == 0:
		return nil, 0, "" // an empty file input
	case len(data) > maxUploadBytes:
		return nil, http.StatusRequestEntityTooLarge, "image too large (at most 5 MB)"
	}
	mime := http.DetectContentType(data)
	if !uploadTypes[mime] {
		return nil, http.StatusUnsupportedMediaType, "only PNG, JPEG, GIF and WebP images can be sent"
	}
	return &store.WebUpload{
		ID: "f" + randomID(10), Key: store.ConversationKey(key), Name: oneLine(filepath.Base(hdr.Filename), 100), MimeType: mime, Data: data,
	}, 0, ""
}

// hand hands the user's message to the core; shown, it is first recorded
// in the conversation's history. People the bot's access list does not
// name get 403 and nothing is recorded (the core still counts the
// refusal).
func (c *Console) hand(w http.ResponseWriter, r *http.Request, key bridges.ConversationKey, text string, up *store.WebUpload, shown bool) {
	h := c.coreHandler()
	if h == nil {
		http.Error(w, "the bridge is not running yet; try again in a moment", http.StatusServiceUnavailable)
		return
	}
	user := CurrentUser(r).Name
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
		c.hub.publish(key.Channel, event{kind: evMessage, thread: key.Thread, msg: stored})
	}
	if err := h.HandleMessage(r.Context(), in); err != nil {
		c.log.Error("web message not accepted", "key", key, "msg_id", in.MsgID, "err", err)
		c.notice(r.Context(), key, "⚠️ Your last message could not be accepted ("+oneLine(err.Error(), 120)+"). Please send it again.")
		http.Error(w, "the message was not accepted", http.StatusInternalServerError)
		return
	}
	c.done(w, r, key)
}

// action hands a click on a card's button to the core, which checks who
// may decide it; its private answers become notices on the user's page.
func (c *Console) action(w http.ResponseWriter, r *http.Request) {
	key, ok := c.keyOf(w, r)
	if !ok {
		return
	}
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
	user := CurrentUser(r).Name
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

// notice posts a message of the console itself into the conversation.
func (c *Console) notice(ctx context.Context, key bridges.ConversationKey, text string) {
	if _, err := c.Post(ctx, key, bridges.Message{Text: text}); err != nil {
		c.log.Warn("post web notice", "key", key, "err", err)
	}
}

// file serves an uploaded image to the user who sent it.
func (c *Console) file(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if c.bot == nil || !fileRE.MatchString(id) {
		http.NotFound(w, r)
		return
	}
	up, err := c.st.WebUpload(r.Context(), id)
	if err != nil || up.Key.Bot != c.bot.Name || up.Key.Channel != CurrentUser(r).Name {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", up.MimeType)
	w.Header().Set("Content-Security-Policy", "default-src 'none'; sandbox")
	w.Header().Set("Cache-Control", "private, max-age=3600")
	_, _ = w.Write(up.Data)
}

// oneLine collapses whitespace and cuts s to n runes.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
