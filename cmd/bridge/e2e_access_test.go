package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/agent/fakemodel"
	"github.com/agentbridge/agentbridge/bridges/adapters/web/webtest"
	"github.com/agentbridge/agentbridge/internal/testkit"
	"github.com/chromedp/chromedp"
)

// Issue 36's people: alice and bob, plain web users, each with a
// hand-off token mapped to themselves on the web bot.
const (
	aliceWebToken     = "alice-web-token-0123456789"
	bobAccessWebToken = "bob-web-token-0123456789ab"
	aliceTermToken    = "alice-term-token-0123456789"
	bobTermToken      = "bob-term-token-0123456789ab"
)

// accessBots is the web bot with alice and bob as users, and their
// hand-off tokens; bobWeb and bobTerm leave bob out of web.users or
// handoff.users (a reload's config).
func accessBots(bobWeb, bobTerm bool) string {
	s := "bots:\n  - { name: console, platform: web, agent: coder }\nweb:\n  users:\n" +
		"    - { name: alice, role: user, token: \"${WEB_TOKEN_ALICE}\" }\n"
	if bobWeb {
		s += "    - { name: bob, role: user, token: \"${WEB_TOKEN_BOB}\" }\n"
	}
	s += "handoff:\n  users:\n    - { name: alice, token: \"" + aliceTermToken + "\", as: { console: alice } }\n"
	if bobTerm {
		s += "    - { name: bob, token: \"" + bobTermToken + "\", as: { console: bob } }\n"
	}
	return s
}

// sse is one server-sent event of a console stream, with when it came.
type sse struct {
	name, data string
	at         time.Time
}

// accessStream is an open console event stream: every event as it comes
// and a channel closed when the stream ends.
type accessStream struct {
	events chan sse
	closed chan struct{}
}

func openStream(t *testing.T, w *webtest.Client, path string) *accessStream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, w.Base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/event-stream")
	resp, err := (&http.Client{Jar: w.HTTP.Jar}).Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %v %v", path, err, resp)
	}
	s := &accessStream{events: make(chan sse, 4096), closed: make(chan struct{})}
	go func() {
		defer close(s.closed)
		defer resp.Body.Close()
		_ = webtest.ReadSSE(resp.Body, func(name, data string) {
			s.events <- sse{name: name, data: data, at: time.Now()}
		})
	}()
	t.Cleanup(func() { cancel(); <-s.closed })
	return s
}

// text is an event's text: a message's HTML as text, a notice's text.
func (e sse) text() string {
	var d struct{ HTML, Text string }
	_ = json.Unmarshal([]byte(e.data), &d)
	return webtest.PageText(d.HTML) + d.Text
}

// waitFor returns the first event named name whose text contains want.
func (s *accessStream) waitFor(t *testing.T, name, want string) sse {
	t.Helper()
	deadline := time.After(e2eWait)
	for {
		select {
		case e := <-s.events:
			if e.name == name && strings.Contains(e.text(), want) {
				return e
			}
		case <-s.closed:
			t.Fatalf("the stream ended before a %s event with %q", name, want)
		case <-deadline:
			t.Fatalf("no %s event with %q", name, want)
		}
	}
}

// waitEnded waits for the stream's "ended" event and its end, and returns
// how long after since the event came; nothing may follow it.
func (s *accessStream) waitEnded(t *testing.T, since time.Time) time.Duration {
	t.Helper()
	deadline := time.After(e2eWait)
	for {
		select {
		case e := <-s.events:
			if e.name != "ended" {
				continue
			}
			took := e.at.Sub(since)
			select {
			case <-s.closed:
			case <-deadline:
				t.Fatal("the stream stayed open after ended")
			}
			for len(s.events) > 0 {
				t.Errorf("delivered after ended: %+v", <-s.events)
			}
			return took
		case <-s.closed:
			if len(s.events) > 0 {
				continue
			}
			t.Fatal("the stream closed without an ended event")
		case <-deadline:
			t.Fatal("no ended event")
		}
	}
}

// waitGone waits until the terminal printed want and exited; it returns
// when it printed want, after since.
func (tm *terminal) waitGone(t *testing.T, want string, since time.Time) time.Duration {
	t.Helper()
	testkit.WaitUntilSeen(t, fmt.Sprintf("the terminal to print %q", want), e2eWait, func() (bool, string) {
		out := tm.out.String()
		return strings.Contains(out, want), "\n" + out
	})
	took := time.Since(since)
	select {
	case <-tm.done:
	case <-time.After(e2eWait):
		t.Fatalf("the terminal stayed attached:\n%s", tm.out)
	}
	return took
}

// within1s logs how long a revocation took to reach an open stream and
// fails the test beyond a second.
func within1s(t *testing.T, what string, took time.Duration) {
	t.Helper()
	t.Logf("%s: %v", what, took)
	if took > time.Second {
		t.Errorf("%s: %v, want within 1s", what, took)
	}
}

var (
	reloadedRE  = regexp.MustCompile(`time=(\S+) level=INFO msg="config reloaded"`)
	sessionLine = regexp.MustCompile(`• ([0-9a-f]{8}) — [^•]*the vault code`)
	attachLine  = regexp.MustCompile(`bridge attach ([0-9a-f-]{36})`)
)

// TestAccessE2E is issue 36's attacks 1–4, through the binary with the
// real CLI and the fake model, alice and bob plain web users with
// hand-off tokens:
//  1. in a conversation alice shared with bob as participant, bob's
//     !sessions lists none of her other conversations (nor their first
//     prompts), and his !new then !resume of her private session is
//     refused: nothing moves, no request of his carries her history;
//  2. after alice ends bob's share (and after she deletes the
//     conversation, agent kept), bob's export and attach are refused;
//  3. bob's event stream opened before the share ended, before a reload
//     removed him from web.users, and alice's own in a tab before she
//     signed out in another, each end with "ended" within a second (his
//     page in a browser goes to his list, then to the sign-in page);
//  4. bob's attached terminal ends within a second of the share's end and
//     of a reload removing him from handoff.users.
func TestAccessE2E(t *testing.T) {
	t.Parallel()
	browser := startBrowser(t)
	ab := startAgentBridge(t, accessBots(true, true), "WEB_TOKEN_ALICE="+aliceWebToken, "WEB_TOKEN_BOB="+bobAccessWebToken)
	base := "http://" + ab.bridge.addr
	cfgPath := filepath.Join(ab.dir, "bridge.yaml")
	alice := webtest.SignIn(t, base+"/signin#token="+aliceWebToken)
	bob := webtest.SignIn(t, base+"/signin#token="+bobAccessWebToken)
	bobPage := newPerson(t, browser, base, bobAccessWebToken) // his browser, beside the streams read here
	openPage := func(thread string) {
		t.Helper()
		bobPage.run(chromedp.Navigate(base + "/chat/" + thread))
		bobPage.waitJS(`document.getElementById("chat") && document.getElementById("chat").dataset.live === "1"`, "bob's page, live")
	}
	say := func(w *webtest.Client, s *accessStream, text, answer string) {
		t.Helper()
		w.Send(text)
		s.waitFor(t, "msg", answer)
	}
	share := func(thread, role string) {
		t.Helper()
		alice.Post("/chat/"+thread+"/share", url.Values{"member": {"bob"}, "role": {role}})
	}
	attachID := func(s *accessStream, w *webtest.Client) string {
		t.Helper()
		w.Send("!handoff")
		return attachLine.FindStringSubmatch(s.waitFor(t, "notice", "bridge attach").text())[1]
	}

	// Alice's private conversation, with a secret.
	alice.NewChat()
	private := alice.Thread
	ps := openStream(t, alice, "/chat/"+private+"/events?since=0")
	say(alice, ps, "the vault code is 4242", "pong: the vault code is 4242")
	alice.Send("!sessions")
	sid := sessionLine.FindStringSubmatch(ps.waitFor(t, "msg", "Sessions here").text())
	if sid == nil {
		t.Fatal("alice's !sessions does not list her private session")
	}
	privateSession := sid[1]

	// Attack 1: a conversation shared with bob as participant.
	alice.NewChat()
	shared := alice.Thread
	as := openStream(t, alice, "/chat/"+shared+"/events?since=0")
	say(alice, as, "plan the launch", "pong: plan the launch")
	share(shared, "participant")
	bob.Thread = shared
	bs := openStream(t, bob, "/chat/"+shared+"/events?since=0")
	say(bob, bs, "bob checks in", "pong: bob checks in")
	bob.Send("!sessions")
	if list := bs.waitFor(t, "msg", "essions here").text(); strings.Contains(list, "4242") || strings.Contains(list, privateSession) {
		t.Errorf("bob's !sessions in the shared conversation lists alice's private one: %s", list)
	}
	bob.Send("!new")
	bs.waitFor(t, "msg", "fresh session")
	bob.Send("!resume " + privateSession)
	bs.waitFor(t, "msg", "not yours to resume")
	say(bob, bs, "[echo-history] what do you remember?", "history:")
	for _, r := range ab.model.MessagesRequests() {
		if body := string(r.Body); strings.Contains(body, "4242") && strings.Contains(body, "what do you remember") {
			t.Errorf("bob's request carries alice's private history: %s", fakemodel.LastUserText(r))
		}
	}
	if _, page := alice.Get("/chat/" + private); strings.Contains(page, "continued this thread") {
		t.Error("alice's private conversation was told bob continued its session")
	}

	// Attacks 2, 3 and 4: bob attached and following, then alice ends the share.
	conv := attachID(bs, bob)
	tm := handoffCmd(t, bobTermToken, nil, "attach", "-url", base, conv)
	tm.waitOut(t, "attached to conversation "+conv)
	openPage(shared)
	start := time.Now()
	share(shared, "")
	within1s(t, "bob's event stream ended … after the share ended", bs.waitEnded(t, start))
	within1s(t, "bob's terminal ended … after the share ended", tm.waitGone(t, "your access to this conversation ended", start))
	bobPage.waitJS(`location.pathname === "/"`, "bob's page gone to his conversation list")
	say(alice, as, "after the share: the code moved to 9191", "pong: after the share")
	refused := func(what string) {
		t.Helper()
		home := t.TempDir()
		out, code := handoffCmd(t, bobTermToken, []string{"HOME=" + home}, "export", conv, "-url", base, "-dir", home).run(t)
		if code != exitRuntime || !strings.Contains(out, "does not take part") {
			t.Errorf("bob's export %s: exit %d, %q", what, code, out)
		}
		if b, _ := os.ReadFile(filepath.Join(home, ".claude")); strings.Contains(string(b), "9191") {
			t.Errorf("bob's export %s wrote the transcript", what)
		}
		out, code = handoffCmd(t, bobTermToken, nil, "attach", "-url", base, conv).run(t)
		if code != exitRuntime || !strings.Contains(out, "does not take part") {
			t.Errorf("bob's attach %s: exit %d, %q", what, code, out)
		}
	}
	refused("after the share ended")
	alice.Post("/chat/"+shared+"/delete", url.Values{"agent": {"keep"}})
	refused("after the conversation was deleted")

	// Attacks 3 and 4 by reload: a new shared conversation, bob following
	// it on the web and in a terminal.
	alice.NewChat()
	third := alice.Thread
	ts := openStream(t, alice, "/chat/"+third+"/events?since=0")
	say(alice, ts, "third plan", "pong: third plan")
	share(third, "participant")
	bob.Thread = third
	bs = openStream(t, bob, "/chat/"+third+"/events?since=0")
	// A participant by share runs participants' commands (!handoff) before he writes.
	conv = attachID(bs, bob)
	tm = handoffCmd(t, bobTermToken, nil, "attach", "-url", base, conv)
	tm.waitOut(t, "attached to conversation "+conv)
	openPage(third)
	// reload rewrites the config and reloads; it returns when the bridge
	// applied it: the time of its first "config reloaded" line since, which
	// the bridge logs once everything is applied (so a stream may end a
	// few milliseconds "before" it). Measured from there, the spawn of
	// `bridge reload` and the config's parsing on a busy machine do not
	// count against the second.
	reload := func(from, to string) time.Time {
		t.Helper()
		before := len(reloadedRE.FindAllStringSubmatch(ab.bridge.logs.String(), -1))
		testkit.WriteFile(t, cfgPath, strings.Replace(readFile(t, cfgPath), from, to, 1))
		if out, err := reloadCmd(ab, cfgPath); err != nil {
			t.Fatalf("bridge reload: %v\n%s", err, out)
		}
		var all [][]string
		testkit.WaitUntil(t, "a config reloaded in the bridge's log", e2eWait, func() bool {
			all = reloadedRE.FindAllStringSubmatch(ab.bridge.logs.String(), -1)
			return len(all) > before
		})
		at, err := time.Parse(time.RFC3339Nano, all[before][1])
		if err != nil {
			t.Fatal(err)
		}
		return at
	}
	applied := reload(accessBots(true, true), accessBots(true, false)) // bob out of handoff.users
	within1s(t, "bob's terminal ended … after the reload", tm.waitGone(t, "your access to this conversation ended", applied))
	applied = reload(accessBots(true, false), accessBots(false, false)) // and out of web.users
	within1s(t, "bob's event stream ended … after the reload", bs.waitEnded(t, applied))
	bobPage.waitJS(`location.pathname === "/signin"`, "bob's page gone to the sign-in page")
	say(alice, ts, "after the reload", "pong: after the reload")

	// Attack 3: alice's tab follows her conversation; she signs out in another.
	other := &webtest.Client{T: t, Base: base, HTTP: &http.Client{Jar: alice.HTTP.Jar, Timeout: 30 * time.Second}}
	other.Get("/")
	start = time.Now()
	other.Post("/signout", url.Values{})
	within1s(t, "alice's other tab's stream ended … after she signed out", ts.waitEnded(t, start))
}
