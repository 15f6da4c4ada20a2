package web

import (
	"bytes"
	"encoding/json"
	"html/template"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/adapters/web/auth"
	"github.com/agentbridge/agentbridge/bridges/core/access"
	"github.com/agentbridge/agentbridge/internal/textcut"
	"github.com/agentbridge/agentbridge/store"
)

// Chat page limits.
const (
	historyShown = 500 // messages a chat page shows
	threadsShown = 100 // conversations listed
)

// home lists the user's conversations (?q= searches them, ?archived=1
// shows the archived ones).
func (c *Console) home(w http.ResponseWriter, r *http.Request) {
	data := struct {
		HasBot bool
		List   threadList
	}{HasBot: c.bot.Load() != nil}
	if data.HasBot {
		data.List = c.threadList(r, "")
	}
	c.render(w, r, http.StatusOK, "home", "chat", data)
}

// threadList is the conversation list as the "threadlist" template draws
// it: the signed-in person's conversations and those shared with them.
type threadList struct {
	Items    []threadItem // Title already shortened
	Query    string       // the search, if any
	Archived bool         // the archived conversations are listed
	Current  string       // the thread shown beside the list
}

// threadList reads the list for the request's person, search (?q=) and
// archive view (?archived=1); current marks the conversation shown.
func (c *Console) threadList(r *http.Request, current string) threadList {
	l := threadList{Query: strings.TrimSpace(r.URL.Query().Get("q")), Archived: r.URL.Query().Get("archived") == "1", Current: current}
	user := auth.CurrentUser(r).Name
	bot := c.bot.Load()
	if bot == nil {
		return l
	}
	items, err := c.st.WebThreads(r.Context(), bot.Name, user, store.WebThreadQuery{Archived: l.Archived, Search: textcut.OneLine(l.Query, 200), Limit: threadsShown})
	if err != nil {
		c.log.Error("list web conversations", "user", user, "err", err)
	}
	p := c.person(r)
	p.Valid = nil // the session was checked for this request; not again per item
	for _, it := range items {
		// The store's query is a filter; the decision is the access rule.
		cv := access.Conv{Key: bridges.ConversationKey{Bot: bot.Name, Channel: it.Owner, Thread: it.Thread}}
		if !c.access.May(r.Context(), p, cv, access.List) {
			continue
		}
		it.Title = titleOf(it)
		item := threadItem{WebThread: it}
		if l.Query != "" && len(l.Items) < snippetsLimit {
			item.Snippet = c.searchSnippet(r.Context(), store.ConversationKey(cv.Key), textcut.OneLine(l.Query, 200))
		}
		l.Items = append(l.Items, item)
	}
	return l
}

// threads serves the conversation list alone (GET /threads, same query
// as home plus ?cur=), which the pages' script swaps in when the list
// changes or a search is typed.
func (c *Console) threads(w http.ResponseWriter, r *http.Request) {
	if c.bot.Load() == nil {
		http.NotFound(w, r)
		return
	}
	cur := r.URL.Query().Get("cur")
	if !threadRE.MatchString(cur) {
		cur = ""
	}
	var buf bytes.Buffer
	if err := c.pages["home"].ExecuteTemplate(&buf, "threadlist", c.threadList(r, cur)); err != nil {
		c.log.Error("render the conversation list", "err", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = buf.WriteTo(w)
}

// titleOf is how a conversation is named in lists and headings: its
// title when renamed, else its first message, shortened.
func titleOf(th store.WebThread) string {
	if th.Named {
		return textcut.OneLine(th.Title, maxTitleRunes)
	}
	return shortTitle(th.Title)
}

// Titles: a default one (the first message) is cut at a word to
// defaultTitleRunes; a chosen one may have maxTitleRunes.
const (
	defaultTitleRunes = 48
	maxTitleRunes     = 80
)

// shortTitle is the first line of text, cut at a word boundary to
// defaultTitleRunes ("" for none).
func shortTitle(text string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(text), "\n")
	line = textcut.OneLine(line, 1<<20)
	r := []rune(line)
	if len(r) <= defaultTitleRunes {
		return line
	}
	cut := string(r[:defaultTitleRunes-1])
	if i := strings.LastIndexByte(cut, ' '); i > defaultTitleRunes/2 {
		cut = cut[:i]
	}
	return strings.TrimRight(cut, " ,.;:-") + "…"
}

// newConversation sends the user to a fresh conversation; it exists once
// its first message is sent.
func (c *Console) newConversation(w http.ResponseWriter, r *http.Request) {
	if c.bot.Load() == nil {
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	http.Redirect(w, r, "/chat/"+randomID(8), http.StatusSeeOther)
}

// chatView is what the chat page shows besides its messages.
type chatView struct {
	Thread, Title string
	Named         bool
	Since         int64
	Messages      []msgView
	List          threadList
	Working       bool // a turn runs
	Starting      bool // no turn runs yet: the agent starts (typing.go)
	MaxUploadMB   string
	MaxUpload     int64  // bytes: the page checks a file's size before sending it
	MaxText       int    // bytes of a message's text (maxTextBytes): a longer paste becomes a file
	Accept        string // the file input's accept list
	Owner, Role   string
	Owns          bool
	MayWrite      bool
	Exists        bool
	Archived      bool
	Shares        []store.WebShare
	Teammates     []string // web users it can be shared with
}

// chatPage shows a conversation as it is: its stored messages (open cards
// with their buttons) and whether a turn is running.
func (c *Console) chatPage(w http.ResponseWriter, r *http.Request) {
	cv, ok := c.conversationOf(w, r, access.See)
	if !ok {
		return
	}
	key := cv.key
	msgs, err := c.st.WebMessages(r.Context(), store.ConversationKey(key), 0, historyShown)
	if err != nil {
		c.log.Error("read web conversation", "key", key, "err", err)
		c.errorPage(w, r, http.StatusInternalServerError, "The conversation could not be read.")
		return
	}
	working, starting := c.turn(key)
	data := chatView{Working: working, Starting: starting,
		Thread: key.Thread, List: c.threadList(r, key.Thread), MaxUploadMB: uploadMB(c.maxUpload),
		MaxUpload: c.maxUpload, MaxText: maxTextBytes,
		Accept: uploadAccept, Owner: key.Channel, Role: cv.role, Owns: cv.owns(), MayWrite: cv.mayWrite(), Exists: cv.exists,
		Archived: cv.thread.Archived, Named: cv.thread.Named,
	}
	if cv.exists {
		data.Title = titleOf(cv.thread)
		if data.Shares, err = c.st.WebThreadShares(r.Context(), key.Bot, key.Thread); err != nil {
			c.log.Warn("list the teammates of a web conversation", "key", key, "err", err)
		}
	}
	data.Teammates = c.teammateNames(key.Channel)
	csrf := auth.CSRFToken(r)
	for _, m := range msgs {
		data.Since = max(data.Since, m.Version)
		data.Messages = append(data.Messages, c.view(m, csrf, c.mayDecide(cv, auth.CurrentUser(r).Name)))
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
	Card             bool   // an open card (with buttons), whether this person may press them or not
	Ask              string // what an open card waits for: "approval" or "answer"
	Buttons          []buttonView
	Images           []string   // upload ids of images, shown inline
	Files            []fileView // other files, as links
	At               time.Time
}

// fileView is a non-image file of a message.
type fileView struct {
	ID, Name, Size string
}

type buttonView struct {
	ID, Label, Class string
}

// mayDecide reports whether the person may decide the conversation's cards:
// its owner and participants (the requester is one of them), and the bot's
// approvers and admins; a viewer who is neither gets no buttons to press.
func (c *Console) mayDecide(cv conv, name string) bool {
	if cv.mayWrite() {
		return true
	}
	bot := c.bot.Load()
	return bot != nil && (slices.ContainsFunc(append(slices.Clone(bot.Access.Approvers), bot.Access.Admins...), func(s string) bool { return strings.EqualFold(s, name) }))
}

// view prepares a stored message for a page of the session with csrf;
// decide false leaves out a card's buttons (the person may not press them).
func (c *Console) view(m store.WebMessage, csrf string, decide bool) msgView {
	v := msgView{
		ID: m.ID, Thread: m.Key.Thread, CSRF: csrf, Seq: m.Seq, Mine: m.Author != "", Author: m.Author,
		CardID: m.CardID, At: m.CreatedAt,
	}
	if v.Mine {
		v.Text = m.Text
		var files []bridges.File
		if len(m.Files) > 0 && json.Unmarshal(m.Files, &files) == nil {
			for _, f := range files {
				if isImage(f.MimeType) {
					v.Images = append(v.Images, f.ID)
				} else {
					v.Files = append(v.Files, fileView{ID: f.ID, Name: f.Name, Size: megabytesOrKB(f.Size)})
				}
			}
		}
	} else {
		v.HTML = c.md.render(m.Text)
	}
	for _, b := range decodeButtons(m.Buttons) {
		v.Card, v.Ask = true, "approval"
		if strings.HasPrefix(b.ID, "q") {
			v.Ask = "answer"
		}
		if !decide {
			continue
		}
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
