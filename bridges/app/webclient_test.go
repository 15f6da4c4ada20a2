package app

import (
	"bufio"
	"context"
	"encoding/json"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"
)

// webClient talks to the bridge's web console over HTTP, as the page's
// script does: a cookie session, the CSRF token from the page, form posts
// and the conversation's server-sent events. It is the part
// TestReloadWebBot needs of cmd/bridge's end-to-end web client, until a
// shared test kit holds one.
type webClient struct {
	t      *testing.T
	base   string // http://host:port
	c      *http.Client
	csrf   string // from the last page fetched
	thread string // the open conversation
}

var (
	csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)
	chatPath  = regexp.MustCompile(`^/chat/([^/]+)$`)
)

// webSignIn signs in with the link the bridge printed,
// http://host:port/signin#token=TOKEN (the page's script posts the
// fragment's token with the form's CSRF token).
func webSignIn(t *testing.T, link string) *webClient {
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
	w := &webClient{t: t, base: u.Scheme + "://" + u.Host, c: &http.Client{Jar: jar, Timeout: 30 * time.Second}}
	t.Cleanup(w.c.CloseIdleConnections)
	w.get("/signin")
	w.post("/signin", url.Values{"token": {token}, "next": {"/"}})
	return w
}

// get fetches path (following redirects), keeps the page's CSRF token and
// returns the final URL's path and the body.
func (w *webClient) get(path string) (string, string) {
	w.t.Helper()
	resp, err := w.c.Get(w.base + path)
	if err != nil {
		w.t.Fatalf("GET %s: %v", path, err)
	}
	return w.page(resp, "GET "+path)
}

// post sends a form with the CSRF token, following the redirect.
func (w *webClient) post(path string, form url.Values) (string, string) {
	w.t.Helper()
	form.Set("csrf", w.csrf)
	resp, err := w.c.PostForm(w.base+path, form)
	if err != nil {
		w.t.Fatalf("POST %s: %v", path, err)
	}
	return w.page(resp, "POST "+path)
}

func (w *webClient) page(resp *http.Response, what string) (string, string) {
	w.t.Helper()
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		w.t.Fatalf("%s: status %d, %v\n%s", what, resp.StatusCode, err, body)
	}
	if m := csrfField.FindSubmatch(body); m != nil {
		w.csrf = html.UnescapeString(string(m[1]))
	}
	return resp.Request.URL.Path, string(body)
}

// newChat opens a new conversation and returns its page.
func (w *webClient) newChat() string {
	w.t.Helper()
	path, body := w.get("/new")
	m := chatPath.FindStringSubmatch(path)
	if m == nil {
		w.t.Fatalf("GET /new ended at %s, want /chat/THREAD", path)
	}
	w.thread = m[1]
	return body
}

// send posts a message to the open conversation.
func (w *webClient) send(text string) {
	w.t.Helper()
	w.post("/chat/"+w.thread+"/send", url.Values{"text": {text}})
}

// webEvent is one "msg" server-sent event: a message added or edited.
type webEvent struct {
	ID   string `json:"id"`
	HTML string `json:"html"`
}

// webStream is the open conversation's event stream.
type webStream struct {
	msgs   chan webEvent
	typing chan bool // "typing" events: a turn runs (true) or ended
	err    chan error
}

// events subscribes to the open conversation's events from the start; the
// stream ends with the test.
func (w *webClient) events() *webStream {
	w.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, w.base+"/chat/"+w.thread+"/events?since=0", nil)
	if err != nil {
		w.t.Fatal(err)
	}
	req.Header.Set("Accept", "text/event-stream")
	c := &http.Client{Jar: w.c.Jar} // no timeout: the stream stays open
	resp, err := c.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		w.t.Fatalf("GET events: %v %v", err, resp)
	}
	s := &webStream{msgs: make(chan webEvent, 1024), typing: make(chan bool, 1024), err: make(chan error, 1)}
	w.t.Cleanup(func() { cancel(); resp.Body.Close() })
	go func() {
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		name := ""
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "event: "):
				name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: ") && name == "msg":
				var ev webEvent
				if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &ev); err == nil {
					s.msgs <- ev
				}
			case strings.HasPrefix(line, "data: ") && name == "typing":
				var ev struct{ On bool }
				if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &ev); err == nil {
					select {
					case s.typing <- ev.On:
					default: // nobody reads them: keep the messages flowing
					}
				}
			case line == "":
				name = ""
			}
		}
		s.err <- sc.Err()
	}()
	return s
}

// wait returns the first message event whose text (tags stripped,
// entities decoded) contains want; with card set, only a message with
// buttons counts.
func (s *webStream) wait(t *testing.T, want string, card bool, timeout time.Duration) webEvent {
	t.Helper()
	deadline := time.After(timeout)
	var seen []string
	for {
		select {
		case ev := <-s.msgs:
			text := pageText(ev.HTML)
			if strings.Contains(text, want) && (!card || strings.Contains(ev.HTML, `name="card"`)) {
				return ev
			}
			seen = append(seen, text)
		case err := <-s.err:
			t.Fatalf("event stream ended (%v) before %q; saw:\n%s", err, want, strings.Join(seen, "\n---\n"))
		case <-deadline:
			t.Fatalf("no message with %q within %v; saw:\n%s", want, timeout, strings.Join(seen, "\n---\n"))
		}
	}
}

var tags = regexp.MustCompile(`<[^>]*>`)

// pageText is html without tags, entities decoded, spaces collapsed.
func pageText(s string) string {
	return strings.Join(strings.Fields(html.UnescapeString(tags.ReplaceAllString(s, " "))), " ")
}
