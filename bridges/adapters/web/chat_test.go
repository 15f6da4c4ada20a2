package web

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/adapters/web/feed"
	"github.com/agentbridge/agentbridge/bridges/kits/bridgetest"
	"github.com/agentbridge/agentbridge/store"
)

// pngBytes is a file that sniffs as image/png.
var pngBytes = append([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), bytes.Repeat([]byte{0}, 64)...)

// waitStored waits until a message of key in the store satisfies ok; it
// rechecks at every change the console publishes for the key's user.
func waitStored(t *testing.T, c *Console, key bridges.ConversationKey, ok func(store.WebMessage) bool) store.WebMessage {
	t.Helper()
	sub := c.hub.Subscribe(feed.ThreadTopic(key.Thread))
	defer c.hub.Unsubscribe(sub)
	timeout := time.After(10 * time.Second)
	for {
		msgs, err := c.st.WebMessages(context.Background(), store.ConversationKey(key), 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range msgs {
			if ok(m) {
				return m
			}
		}
		select {
		case <-sub.Events():
		case <-timeout:
			t.Fatalf("no such message in %s; have %+v", key, msgs)
		}
	}
}

// sendForm posts text and an optional image as the page's script does.
func (cl *client) sendForm(thread, csrf, text string, image []byte) int {
	cl.t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	_ = mw.WriteField("csrf", csrf)
	_ = mw.WriteField("text", text)
	if image != nil {
		fw, _ := mw.CreateFormFile("image", "shot.png")
		_, _ = fw.Write(image)
	}
	_ = mw.Close()
	req, _ := http.NewRequest("POST", cl.base+"/chat/"+thread+"/send", &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Origin", cl.base)
	req.Header.Set("X-Requested-With", "fetch")
	resp, err := cl.hc.Do(req)
	if err != nil {
		cl.t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func TestChatThroughCore(t *testing.T) {
	cfg := testConfig(t, "127.0.0.1:9464", usersYAML)
	cfg.Bots[0].Access.Users = []string{"ana"} // bob may sign in but not talk to the bot
	c, srv, _ := newTestConsole(t, cfg, nil)
	core := bridgetest.RunCore(t, cfg, map[string]bridges.Platform{"console": c}, nil)
	waitRunning(t, c)
	ana, bob := newClient(t, srv.URL), newClient(t, srv.URL)
	anaCSRF, bobCSRF := ana.signIn(anaToken), bob.signIn(bobToken)
	key := bridges.ConversationKey{Bot: "console", Channel: "ana", Thread: "thread0001"}

	// A message with an image reaches the agent; the answer is stored and shown.
	if s := ana.sendForm(key.Thread, anaCSRF, "hello", pngBytes); s != http.StatusNoContent {
		t.Fatalf("send: %d", s)
	}
	mine := waitStored(t, c, key, func(m store.WebMessage) bool { return m.Author == "ana" })
	waitStored(t, c, key, func(m store.WebMessage) bool { return m.Author == "" && strings.Contains(m.Text, "pong: hello") })
	sess, err := core.Pool.WaitSession(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	sent, _ := sess.WaitSent(context.Background(), 1)
	if len(sent[0].Images) != 1 || sent[0].Images[0].MediaType != "image/png" || !bytes.Equal(sent[0].Images[0].Data, pngBytes) {
		t.Errorf("agent got images %+v", sent[0].Images)
	}
	page := mustGet(t, ana, "/chat/"+key.Thread)
	for _, want := range []string{"pong: hello", `<img class="upload" src="/files/f`, "$0.0010"} {
		if !strings.Contains(page, want) {
			t.Errorf("chat page lacks %q", want)
		}
	}
	if !strings.Contains(mustGet(t, ana, "/"), `href="/chat/thread0001">hello</a>`) {
		t.Error("the conversation is not listed on the start page")
	}

	// The image is served to its sender only.
	fileID := strings.Split(strings.Split(page, `src="/files/`)[1], `"`)[0]
	if s, body, resp := ana.do("GET", "/files/"+fileID, nil, nil); s != 200 || body != string(pngBytes) || resp.Header.Get("Content-Type") != "image/png" {
		t.Errorf("ana GET file: %d %s", s, resp.Header.Get("Content-Type"))
	}
	if s, _, _ := bob.do("GET", "/files/"+fileID, nil, nil); s != http.StatusNotFound {
		t.Errorf("bob GET ana's file: %d, want 404", s)
	}
	// Nobody sees another person's conversation unless it is shared.
	if s, body, _ := bob.do("GET", "/chat/"+key.Thread, nil, nil); s != http.StatusNotFound || strings.Contains(body, "pong: hello") {
		t.Errorf("bob GET ana's conversation: %d", s)
	}

	// Not in access.users: refused, nothing recorded or sent.
	if s := bob.sendForm(key.Thread, bobCSRF, "let me in", nil); s != http.StatusNotFound {
		t.Errorf("bob send into ana's conversation: %d, want 404", s)
	}
	if s := bob.sendForm("bobthread1", bobCSRF, "let me in", nil); s != http.StatusForbidden {
		t.Errorf("bob send: %d, want 403", s)
	}
	if msgs, _ := c.st.WebMessages(context.Background(), store.ConversationKey{Bot: "console", Channel: "bob", Thread: "bobthread1"}, 0, 0); len(msgs) != 0 {
		t.Errorf("refused message recorded: %+v", msgs)
	}

	// Binary files that are not images or PDFs, or too big, are refused.
	if s := ana.sendForm(key.Thread, anaCSRF, "x", append([]byte("\x7fELF\x02\x01\x01"), make([]byte, 64)...)); s != http.StatusUnsupportedMediaType {
		t.Errorf("binary upload: %d, want 415", s)
	}
	if s := ana.sendForm(key.Thread, anaCSRF, "x", append(pngBytes, make([]byte, maxImageBytes)...)); s != http.StatusRequestEntityTooLarge {
		t.Errorf("big image: %d, want 413", s)
	}
	if s := ana.sendForm(key.Thread, anaCSRF, "x", bytes.Repeat([]byte("a"), int(c.maxUpload)+1)); s != http.StatusRequestEntityTooLarge {
		t.Errorf("big file: %d, want 413", s)
	}

	// A stream that reconnects after the first message gets only what changed since.
	events := readEvents(t, ana, "/chat/"+key.Thread+"/events", map[string]string{"Last-Event-ID": itoa(mine.Version)})
	if len(events) == 0 || strings.Contains(strings.Join(events, "\n"), `m-`+mine.ID) {
		t.Errorf("catch-up after version %d: %q", mine.Version, events)
	}
}

// readEvents opens an event stream and returns the data lines it sends up
// to the turn state (which ends the catch-up).
func readEvents(t *testing.T, cl *client, path string, header map[string]string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", cl.base+path, nil)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := cl.hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	var out []string
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "event: typing" {
			return out
		}
		if strings.HasPrefix(line, "data: ") {
			out = append(out, line)
		}
	}
	t.Fatalf("stream ended before the turn state: %v", sc.Err())
	return nil
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// waitRunning waits until the core has started the console's Run (before
// that, sending answers 503: the core is not accepting messages yet).
func waitRunning(t *testing.T, c *Console) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); c.coreHandler() == nil; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the core never ran the console")
		}
	}
}

// TestMessageSentWhileStartingWaitsForTheCore: the sign-in link is printed
// (Announce) before the core runs the console; a message sent in between
// waits for the core and is taken, not refused with "not running yet".
// It waits before its session, token and access are checked (afterStart),
// so that they are decided when it acts, not 15 s earlier.
// Without Announce (no bridge starting) the answer is 503 at once.
func TestMessageSentWhileStartingWaitsForTheCore(t *testing.T) {
	cfg := testConfig(t, "127.0.0.1:9464", usersYAML)
	c, srv, _ := newTestConsole(t, cfg, nil)
	ana := newClient(t, srv.URL)
	anaCSRF := ana.signIn(anaToken)
	start := time.Now()
	if s := ana.sendForm("thread0001", anaCSRF, "too early", nil); s != http.StatusServiceUnavailable {
		t.Fatalf("a message without a starting bridge: %d, want 503", s)
	}
	if d := time.Since(start); d > StartWait/2 {
		t.Fatalf("the refusal without a starting bridge took %s", d)
	}

	c.Announce(io.Discard)
	sent := make(chan int, 1)
	go func() { sent <- ana.sendForm("thread0002", anaCSRF, "quick hello", nil) }()
	// The request waits for the core (it is not answered before Run).
	select {
	case s := <-sent:
		t.Fatalf("the message was answered %d before the core ran", s)
	case <-time.After(200 * time.Millisecond):
	}
	bridgetest.RunCore(t, cfg, map[string]bridges.Platform{"console": c}, nil)
	select {
	case s := <-sent:
		if s != http.StatusNoContent {
			t.Fatalf("the message sent while starting: %d, want 204", s)
		}
	case <-time.After(StartWait):
		t.Fatal("the message sent while starting was never answered")
	}
	key := bridges.ConversationKey{Bot: "console", Channel: "ana", Thread: "thread0002"}
	waitStored(t, c, key, func(m store.WebMessage) bool { return m.Author == "" && strings.Contains(m.Text, "pong: quick hello") })
}

// TestSignedOutWhileStartingIsRefused: a message held while the bridge
// starts is checked when it acts, not when it arrived: its sender signed
// out meanwhile, so it is refused and nothing reaches the agent.
func TestSignedOutWhileStartingIsRefused(t *testing.T) {
	cfg := testConfig(t, "127.0.0.1:9464", usersYAML)
	c, srv, _ := newTestConsole(t, cfg, nil)
	ana := newClient(t, srv.URL)
	anaCSRF := ana.signIn(anaToken)
	c.Announce(io.Discard)
	sent := make(chan int, 1)
	go func() { sent <- ana.sendForm("thread0003", anaCSRF, "sent before signing out", nil) }()
	select {
	case s := <-sent:
		t.Fatalf("the message was answered %d before the core ran", s)
	case <-time.After(200 * time.Millisecond):
	}
	if s, _, _ := ana.do("POST", "/signout", url.Values{"csrf": {anaCSRF}}, nil); s != http.StatusSeeOther {
		t.Fatalf("sign out: %d", s)
	}
	core := bridgetest.RunCore(t, cfg, map[string]bridges.Platform{"console": c}, nil)
	select {
	case s := <-sent:
		if s == http.StatusNoContent || s == http.StatusServiceUnavailable {
			t.Fatalf("the message of a signed-out sender was answered %d, want a refusal", s)
		}
	case <-time.After(StartWait):
		t.Fatal("the held message was never answered")
	}
	if n := len(core.Pool.Acquisitions()); n != 0 {
		t.Errorf("%d agent processes acquired for a signed-out sender", n)
	}
	key := bridges.ConversationKey{Bot: "console", Channel: "ana", Thread: "thread0003"}
	if msgs, err := c.st.WebMessages(context.Background(), store.ConversationKey(key), 0, 10); err == nil && len(msgs) != 0 {
		t.Errorf("the signed-out sender's message was stored: %+v", msgs)
	}
}
