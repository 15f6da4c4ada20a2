// Package webtest is the tests' client of the bridge's web console: it
// talks to the console over HTTP as the page's script does (a cookie
// session, the CSRF token from the page, form posts and the conversation's
// server-sent events). It imports only the standard library, so the
// composition root's tests and the end-to-end tests both use it.
package webtest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode"
)

// Client is one signed-in browser of the web console. Every request
// failure fails the test.
type Client struct {
	T      *testing.T
	Base   string       // http://host:port
	HTTP   *http.Client // holds the session cookie in its Jar
	CSRF   string       // from the last page fetched
	Thread string       // the open conversation
}

var (
	csrfField   = regexp.MustCompile(`name="csrf" value="([^"]+)"`)
	chatPath    = regexp.MustCompile(`^/chat/([^/]+)$`)
	tags        = regexp.MustCompile(`<[^>]*>`)
	cardIDField = regexp.MustCompile(`name="card" value="([^"]+)"`)
	cardButtons = regexp.MustCompile(`<button[^>]*value="([^"]+)"[^>]*>([^<]*)</button>`)
)

// SignIn signs in with the link the bridge printed,
// http://host:port/signin#token=TOKEN (the page's script posts the
// fragment's token with the form's CSRF token).
func SignIn(t *testing.T, link string) *Client {
	t.Helper()
	u, err := url.Parse(link)
	if err != nil {
		t.Fatalf("sign-in link %q: %v", link, err)
	}
	token := strings.TrimPrefix(u.Fragment, "token=")
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	w := &Client{T: t, Base: u.Scheme + "://" + u.Host, HTTP: &http.Client{Jar: jar, Timeout: 30 * time.Second}}
	t.Cleanup(w.HTTP.CloseIdleConnections)
	w.Get("/signin")
	w.Post("/signin", url.Values{"token": {token}, "next": {"/"}})
	return w
}

// Get fetches path (following redirects), keeps the page's CSRF token and
// returns the final URL's path and the body.
func (w *Client) Get(path string) (string, string) {
	w.T.Helper()
	resp, err := w.HTTP.Get(w.Base + path)
	if err != nil {
		w.T.Fatalf("GET %s: %v", path, err)
	}
	return w.page(resp, "GET "+path)
}

// Post sends a form with the CSRF token, following the redirect, and
// returns the final URL's path and the body.
func (w *Client) Post(path string, form url.Values) (string, string) {
	w.T.Helper()
	form.Set("csrf", w.CSRF)
	resp, err := w.HTTP.PostForm(w.Base+path, form)
	if err != nil {
		w.T.Fatalf("POST %s: %v", path, err)
	}
	return w.page(resp, "POST "+path)
}

// page reads a response that must be 200 OK and keeps its CSRF token.
func (w *Client) page(resp *http.Response, what string) (string, string) {
	w.T.Helper()
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		w.T.Fatalf("%s: status %d, %v\n%s", what, resp.StatusCode, err, body)
	}
	if token := PageCSRF(string(body)); token != "" {
		w.CSRF = token
	}
	return resp.Request.URL.Path, string(body)
}

// NewChat opens a new conversation, makes it the open one and returns its
// page.
func (w *Client) NewChat() string {
	w.T.Helper()
	path, body := w.Get("/new")
	m := chatPath.FindStringSubmatch(path)
	if m == nil {
		w.T.Fatalf("GET /new ended at %s, want /chat/THREAD", path)
	}
	w.Thread = m[1]
	return body
}

// Send posts a message to the open conversation.
func (w *Client) Send(text string) {
	w.T.Helper()
	w.Post("/chat/"+w.Thread+"/send", url.Values{"text": {text}})
}

// Click presses a card's button in the open conversation.
func (w *Client) Click(card, choice string) {
	w.T.Helper()
	w.Post("/chat/"+w.Thread+"/action", url.Values{"card": {card}, "choice": {choice}})
}

// Event is one "msg" server-sent event: a message added or edited.
type Event struct {
	ID   string `json:"id"`
	HTML string `json:"html"`
}

// Stream is the open conversation's event stream.
type Stream struct {
	Msgs   chan Event
	Typing chan bool // "typing" events: a turn runs (true) or ended; dropped when nobody reads them
	Err    chan error
}

// Events subscribes to the open conversation's events from the start; the
// stream ends with the test.
func (w *Client) Events() *Stream {
	w.T.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, w.Base+"/chat/"+w.Thread+"/events?since=0", nil)
	if err != nil {
		w.T.Fatal(err)
	}
	req.Header.Set("Accept", "text/event-stream")
	c := &http.Client{Jar: w.HTTP.Jar} // no timeout: the stream stays open
	resp, err := c.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		w.T.Fatalf("GET events: %v %v", err, resp)
	}
	s := &Stream{Msgs: make(chan Event, 1024), Typing: make(chan bool, 1024), Err: make(chan error, 1)}
	w.T.Cleanup(func() { cancel(); resp.Body.Close() })
	go func() {
		s.Err <- ReadSSE(resp.Body, func(name, data string) {
			switch name {
			case "msg":
				var ev Event
				if err := json.Unmarshal([]byte(data), &ev); err == nil {
					s.Msgs <- ev
				}
			case "typing":
				var ev struct{ On bool }
				if err := json.Unmarshal([]byte(data), &ev); err == nil {
					select {
					case s.Typing <- ev.On:
					default: // nobody reads them: keep the messages flowing
					}
				}
			}
		})
	}()
	return s
}

// ReadSSE reads server-sent events from r until it ends, calling fn with
// each data line and the name of the event it belongs to ("" before an
// "event:" line), and returns the read error (nil at the end of r).
func ReadSSE(r io.Reader, fn func(name, data string)) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	name := ""
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			fn(name, strings.TrimPrefix(line, "data: "))
		case line == "":
			name = ""
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("read events: %w", err)
	}
	return nil
}

// Wait returns the first message event whose text (tags stripped,
// entities decoded) contains want; with card set, only a message with
// buttons counts. It fails the test when the stream ends or timeout
// passes first, listing the messages it saw.
func (s *Stream) Wait(t *testing.T, want string, card bool, timeout time.Duration) Event {
	t.Helper()
	deadline := time.After(timeout)
	var seen []string
	for {
		select {
		case ev := <-s.Msgs:
			text := PageText(ev.HTML)
			if strings.Contains(text, want) && (!card || strings.Contains(ev.HTML, `name="card"`)) {
				return ev
			}
			seen = append(seen, text)
		case err := <-s.Err:
			t.Fatalf("event stream ended (%v) before %q; saw:\n%s", err, want, strings.Join(seen, "\n---\n"))
		case <-deadline:
			t.Fatalf("no message with %q within %v; saw:\n%s", want, timeout, strings.Join(seen, "\n---\n"))
		}
	}
}

// PageText is html without tags, entities decoded, spaces collapsed.
func PageText(s string) string {
	return strings.Join(strings.Fields(html.UnescapeString(tags.ReplaceAllString(s, " "))), " ")
}

// CardChoice returns the card id and the choice id of the card's button
// labelled label (emoji and spaces around it aside); it fails the test
// when the card has no such button.
func CardChoice(t *testing.T, ev Event, label string) (card, choice string) {
	t.Helper()
	if m := cardIDField.FindStringSubmatch(ev.HTML); m != nil {
		card = html.UnescapeString(m[1])
	}
	for _, b := range cardButtons.FindAllStringSubmatch(ev.HTML, -1) {
		if strings.TrimFunc(html.UnescapeString(b[2]), func(r rune) bool { return !unicode.IsLetter(r) }) == label {
			return card, html.UnescapeString(b[1])
		}
	}
	t.Fatalf("card has no %q button (card id %q):\n%s", label, card, ev.HTML)
	return "", ""
}

// On is w's session on another replica (base http://host:port): the same
// cookies, sent there as a load balancer would. It fails the test when the
// session is not valid there.
func (w *Client) On(base string) *Client {
	w.T.Helper()
	o := &Client{T: w.T, Base: base, HTTP: &http.Client{Jar: w.HTTP.Jar, Timeout: w.HTTP.Timeout}}
	if path, _ := o.Get("/"); path != "/" {
		w.T.Fatalf("the session of %s is not valid on %s: GET / ended at %s", w.Base, base, path)
	}
	return o
}

// PageCSRF returns the CSRF token of a page's forms, or "" when the page
// has none.
func PageCSRF(page string) string {
	if m := csrfField.FindStringSubmatch(page); m != nil {
		return html.UnescapeString(m[1])
	}
	return ""
}
