package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/agentbridge/agentbridge/bridges/adapters/web/auth"
)

// holdSends is a JS statement: from now on the answers to the page's
// message sends are held (the request reaches the bridge, its answer
// reaches the page only on window.releaseSends()), as a slow bridge or
// network would. window.heldSends counts the sends so held.
const holdSends = `(() => {
	if (window.releaseSends) return true;
	const fetch0 = window.fetch;
	let gate, open;
	const arm = () => { gate = new Promise(r => open = r); };
	arm();
	window.heldSends = 0;
	window.releaseSends = () => { const o = open; arm(); o(); };
	window.fetch = function (url, init) {
		const p = fetch0.apply(this, arguments);
		if (!String(url).endsWith("/send")) return p;
		window.heldSends++;
		const g = gate;
		return p.then(r => g.then(() => r));
	};
	return true;
})()`

// mineCount is a JS expression: how many of my messages read exactly s.
func mineCount(s string) string {
	return fmt.Sprintf(`[...document.querySelectorAll(".msg.mine .text")].filter(e => e.innerText === %s).length`, jsString(s))
}

// openNewChat opens a new conversation and waits for its events.
func (p *person) openNewChat() string {
	p.t.Helper()
	p.run(chromedp.Navigate(p.base + "/new"))
	p.waitJS(`document.getElementById("chat") && document.getElementById("chat").dataset.live === "1"`, "a new conversation, live")
	var thread string
	p.js(`document.getElementById("chat").dataset.thread`, &thread)
	return thread
}

// secondTab opens another tab of the person's browser (same cookies and
// storage), closed when the test ends.
func (p *person) secondTab() *person {
	p.t.Helper()
	ctx, cancel := chromedp.NewContext(p.ctx)
	p.t.Cleanup(cancel)
	if err := chromedp.Do(ctx); err != nil { // opens the tab: without a timeout, which would close it
		p.t.Fatalf("open a second tab: %v", err)
	}
	return &person{t: p.t, ctx: ctx, base: p.base}
}

// typeKeys focuses the message box and types s.
func (p *person) typeKeys(s string) {
	p.t.Helper()
	p.run(chromedp.Focus(chromedp.ID("text")), chromedp.KeyEvent(s))
}

// holdingProxy stands between the browser and the bridge at base: every
// request goes through to the bridge, except a message send (POST
// /chat/…/send), which it reads whole and holds until the test releases
// it, as a slow network or a busy bridge would. A send whose browser went
// away meanwhile (a reload, a closed tab) never reaches the bridge.
type holdingProxy struct {
	t    *testing.T
	url  string
	held chan chan bool // per send: true lets it go on to the bridge
}

func newHoldingProxy(t *testing.T, base string) *holdingProxy {
	t.Helper()
	target, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(target) // keeps the browser's Host: the bridge's same-origin checks hold
	h := &holdingProxy{t: t, held: make(chan chan bool, 8)}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/send") {
			rp.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(r.Body) // read whole, so that a browser going away ends r.Context()
		if err != nil {
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		release := make(chan bool, 1)
		h.held <- release
		select {
		case <-release:
			rp.ServeHTTP(w, r)
		case <-r.Context().Done(): // the browser left: the bridge never hears of it
		}
	}))
	t.Cleanup(srv.Close)
	h.url = srv.URL
	return h
}

// next waits for the next send held and returns its release.
func (h *holdingProxy) next() chan bool {
	h.t.Helper()
	select {
	case release := <-h.held:
		return release
	case <-time.After(e2eWait):
		h.t.Fatalf("no message send reached the proxy within %v", e2eWait)
		return nil
	}
}

// TestWebConsoleTrust (issue 39) checks the console never loses what
// people type and says what is going on, in the shared Chromium through
// the real binary, CLI and fake model: a message typed while the last
// send is still on its way is kept and both arrive whole; a failed send
// comes back into the box; Enter twice sends once; drafts survive a
// reload; a message stays the draft until the bridge accepted it (a tab
// closed or reloaded mid-send loses nothing); the status says "Starting the agent…", "Working…" and "Waiting
// for your approval"; the heading follows the title; a tab signed out
// elsewhere goes to sign-in on its next action, with its draft kept; the
// older of two sign-in tabs works; the token never stays in the address.
func TestWebConsoleTrust(t *testing.T) {
	t.Parallel()
	browser := startBrowser(t)
	ab := startAgentBridge(t, webBots, "WEB_TOKEN_ANA="+anaWebToken, "WEB_TOKEN_BOB="+bobWebToken)
	base := "http://" + ab.bridge.addr
	ana := newPerson(t, browser, base, anaWebToken)
	ana.setView(phone, "light")
	ana.openNewChat()

	t.Run("typed during a slow send: kept, and both messages arrive whole", func(t *testing.T) {
		ana.t = t
		ana.js(holdSends, new(bool))
		ana.typeKeys("step 1 of the plan")
		ana.run(chromedp.KeyEvent(kb.Enter))
		ana.waitJS(`window.heldSends === 1 && document.getElementById("text").value === ""`, "the first send on its way, the box empty")
		ana.typeKeys("step 2 of the plan")
		ana.waitJS(mineCount("step 1 of the plan")+" === 1", "the first message in the conversation")
		ana.js(`window.releaseSends(); true`, new(bool))
		ana.waitJS(`!document.getElementById("composer").dataset.sending`, "the first send answered")
		var box string
		ana.js(`document.getElementById("text").value`, &box)
		if box != "step 2 of the plan" {
			t.Fatalf("the box holds %q after the first send returned, want the text typed meanwhile", box)
		}
		ana.run(chromedp.KeyEvent(kb.Enter))
		ana.waitJS(`window.heldSends === 2`, "the second send")
		ana.js(`window.releaseSends(); true`, new(bool))
		ana.waitJS(mineCount("step 2 of the plan")+" === 1", "the second message whole")
		ana.waitJS(botHas("step 2 of the plan"), "the answer to the second message") // maybe with the first, in one turn
		ana.waitJS(`document.getElementById("working").hidden`, "the turns to end")
	})

	t.Run("Enter twice sends once", func(t *testing.T) {
		ana.t = t
		ana.typeKeys("[slow 3] only once")
		ana.run(chromedp.KeyEvent(kb.Enter), chromedp.KeyEvent(kb.Enter))
		ana.waitJS(`window.heldSends === 3`, "the send on its way")
		ana.js(`window.releaseSends(); true`, new(bool))
		ana.waitJS(botHas("pong: [slow 3] only once"), "the answer")
		ana.waitJS(`document.getElementById("working").hidden`, "the turn to end")
		var n, held int
		ana.js(mineCount("[slow 3] only once"), &n)
		ana.js(`window.heldSends`, &held)
		if n != 1 || held != 3 {
			t.Errorf("Enter pressed twice: %d messages shown, %d sends; want 1 message, 1 send", n, held-2)
		}
	})

	t.Run("a failed send comes back into the box", func(t *testing.T) {
		ana.t = t
		ana.js(`window.failSends = true; if (!window.fetch1) { window.fetch1 = window.fetch;
			window.fetch = function (url, init) { return window.failSends && String(url).endsWith("/send")
				? Promise.reject(new TypeError("offline")) : window.fetch1.apply(this, arguments); }; } true`, new(bool))
		ana.typeKeys("not lost")
		ana.run(chromedp.KeyEvent(kb.Enter))
		ana.waitJS(`document.querySelector("#toasts .toast.error")`, "the error")
		ana.waitJS(`document.getElementById("text").value === "not lost"`, "the text back in the box")
		var covers bool
		ana.js(`(() => { const a = document.querySelector("#toasts .toast").getBoundingClientRect(), b = document.getElementById("send").getBoundingClientRect();
			return a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom; })()`, &covers)
		if covers {
			t.Error("the toast covers the Send button")
		}
		ana.js(`window.failSends = false; document.getElementById("text").value = "";
			document.getElementById("text").dispatchEvent(new Event("input")); true`, new(bool))
	})

	t.Run("a draft survives a reload, per conversation", func(t *testing.T) {
		ana.t = t
		ana.typeKeys("a draft to keep")
		ana.run(chromedp.Reload())
		ana.waitJS(`document.getElementById("chat").dataset.live === "1"`, "the reloaded chat")
		ana.waitJS(`document.getElementById("text").value === "a draft to keep"`, "the draft back in the box")
		ana.openNewChat()
		var other string
		ana.js(`document.getElementById("text").value`, &other)
		if other != "" {
			t.Errorf("another conversation's box holds %q", other)
		}
	})

	t.Run("a message stays the draft until the bridge accepted it", func(t *testing.T) {
		proxy := newHoldingProxy(t, base)
		slow := newPerson(t, browser, proxy.url, anaWebToken)
		thread := slow.openNewChat()
		const live = `document.getElementById("chat").dataset.live === "1"`
		box := func(want, what string) {
			t.Helper()
			slow.waitJS(`document.getElementById("text").value === `+jsString(want), what)
			var stored string
			slow.js(`localStorage.getItem("draft:" + document.getElementById("composer").action) || ""`, &stored)
			if stored != want {
				t.Errorf("%s: the saved draft is %q, want %q", what, stored, want)
			}
		}

		// A tab closed while its send is on its way: the bridge never
		// accepted the message, and the conversation's draft holds it.
		tabCtx, closeTab := chromedp.NewContext(slow.ctx)
		t.Cleanup(closeTab)
		if err := chromedp.Do(tabCtx); err != nil {
			t.Fatalf("open a second tab: %v", err)
		}
		tab := &person{t: t, ctx: tabCtx, base: slow.base}
		tab.run(chromedp.Navigate(slow.base + "/chat/" + thread))
		tab.waitJS(live, "the conversation in a second tab")
		tab.typeKeys("kept though the tab closed")
		tab.run(chromedp.KeyEvent(kb.Enter))
		proxy.next()
		tab.waitJS(`document.getElementById("composer").dataset.sending && document.getElementById("text").value === ""`, "the send on its way, the box empty")
		closeTab()
		slow.run(chromedp.Reload())
		slow.waitJS(live, "the reloaded chat")
		box("kept though the tab closed", "the text of the send the closed tab never finished, in the box")

		// A reload while the send is on its way aborts it: the text is back
		// in the box.
		slow.run(chromedp.Focus(chromedp.ID("text")), chromedp.KeyEvent(kb.Enter))
		proxy.next()
		slow.waitJS(`document.getElementById("composer").dataset.sending && document.getElementById("text").value === ""`, "the send on its way, the box empty")
		slow.run(chromedp.Reload())
		slow.waitJS(live, "the reloaded chat")
		box("kept though the tab closed", "the text of the send the reload aborted, back in the box")
		var shown int
		slow.js(mineCount("kept though the tab closed"), &shown)
		if shown != 0 {
			t.Fatalf("the aborted sends show %d times in the conversation", shown)
		}

		// Accepted: what was typed meanwhile stays, alone.
		slow.run(chromedp.Focus(chromedp.ID("text")), chromedp.KeyEvent(kb.Enter))
		release := proxy.next()
		slow.waitJS(`document.getElementById("text").value === ""`, "the box empty while the send is on its way")
		slow.typeKeys("typed meanwhile")
		release <- true
		slow.waitJS(mineCount("kept though the tab closed")+" === 1", "the message accepted")
		slow.waitJS(`!document.getElementById("composer").dataset.sending`, "the send answered")
		box("typed meanwhile", "the text typed during the send")
		slow.run(chromedp.Reload())
		slow.waitJS(live, "the reloaded chat")
		box("typed meanwhile", "after a reload, the text typed during the send")

		// Accepted with nothing typed since: the draft is gone.
		slow.run(chromedp.Focus(chromedp.ID("text")), chromedp.KeyEvent(kb.Enter))
		proxy.next() <- true
		slow.waitJS(mineCount("typed meanwhile")+" === 1", "the second message accepted")
		slow.waitJS(`!document.getElementById("composer").dataset.sending`, "the second send answered")
		slow.run(chromedp.Reload())
		slow.waitJS(live, "the reloaded chat")
		box("", "after a send accepted and a reload, the composer")
		slow.waitJS(`document.getElementById("working").hidden`, "the turns to end")
	})

	t.Run("status: starting, working, waiting for your approval; the title follows", func(t *testing.T) {
		ana.t = t
		ana.js(`window.states = []; new MutationObserver(() => window.states.push(document.getElementById("working").hidden ? "" :
			document.getElementById("working-text").textContent)).observe(document.getElementById("working"),
			{attributes: true, childList: true, subtree: true, characterData: true}); true`, new(bool))
		ana.send("[bash touch status-card.txt]")
		ana.waitJS(`document.querySelector(".msg.card button[data-choice=allow]")`, "the permission card")
		ana.waitJS(`document.getElementById("working-text").textContent === "Waiting for your approval" && !document.getElementById("working").hidden`,
			`"Waiting for your approval"`)
		ana.checkFits("the chat with a waiting card on a phone")
		ana.screenshot("web-phone-waiting-light.png") // docs/web.md (WEB_SCREENSHOTS=$PWD/docs)
		ana.setView(phone, "dark")
		ana.checkFits("the chat with a waiting card on a phone, dark")
		ana.screenshot("web-phone-waiting-dark.png")
		ana.setView(phone, "light")
		var states []string
		ana.js(`window.states`, &states)
		if len(states) == 0 || states[0] != "Starting the agent…" {
			t.Errorf("the status went %q; want it to start with \"Starting the agent…\"", states)
		}
		ana.waitJS(`document.getElementById("chat-title").textContent === "[bash touch status-card.txt]" && document.title.startsWith("[bash touch status-card.txt]")`,
			"the heading and the tab's title following the conversation's title")
		admin := ana.secondTab()
		admin.run(chromedp.Navigate(base + "/admin/agents"))
		admin.waitJS(`document.getElementById("agents")`, "the live agents page")
		var thread, agentState string
		ana.js(`document.getElementById("chat").dataset.thread`, &thread)
		admin.js(`(() => { const tr = [...document.querySelectorAll("#agents tbody tr")].find(tr => tr.querySelector('a[href="/chat/`+thread+`"]'));
			return tr ? tr.querySelector(".agent-state").innerText.trim() : "(no row)"; })()`, &agentState)
		if agentState != "Waiting for your approval" {
			t.Errorf("the live agents page says %q, want the chat's words \"Waiting for your approval\"", agentState)
		}
		ana.click("allow")
		ana.waitJS(botHas("tool said"), "the tool's result")
		ana.waitJS(`document.getElementById("working").hidden`, "the turn to end")
		ana.js(`window.states`, &states)
		working := false
		for _, s := range states {
			working = working || s == "Working…"
		}
		if !working {
			t.Errorf("the status went %q; want \"Working…\" while the agent worked", states)
		}
	})

	t.Run("a teammate sees whose approval the card waits for", func(t *testing.T) {
		ana.t = t
		thread := ana.openNewChat()
		ana.send("[bash touch shared-card.txt]")
		ana.waitJS(`document.querySelector(".msg.card button[data-choice=allow]")`, "the permission card")
		if s := ana.fetchStatus("/chat/"+thread+"/share", `{method: "POST", headers: {"X-Requested-With": "fetch"}, body: new URLSearchParams({
			csrf: document.querySelector("input[name=csrf]").value, member: "bob", role: "viewer"})}`); s != 204 {
			t.Fatalf("share with bob: status %d", s)
		}
		bob := newPerson(t, browser, base, bobWebToken)
		bob.run(chromedp.Navigate(base + "/chat/" + thread))
		bob.waitJS(`document.getElementById("chat").dataset.live === "1"`, "bob's view of the conversation")
		bob.waitJS(`document.getElementById("working-text").textContent === "Waiting for ana’s approval" && !document.getElementById("working").hidden`,
			`"Waiting for ana’s approval"`)
		bob.waitJS(`document.querySelector(".msg.card")`, "the card in bob's view")
		var bobButtons int
		bob.js(`document.querySelectorAll(".msg.card button[data-choice]").length`, &bobButtons)
		if bobButtons != 0 {
			t.Errorf("a viewer sees %d buttons on the card he may not press", bobButtons)
		}
		var card string
		ana.js(`document.querySelector(".msg.card .md").innerText`, &card)
		if n := strings.Count(card, "touch shared-card.txt"); n != 1 {
			t.Errorf("the card shows the command %d times, want once:\n%s", n, card)
		}
		ana.click("allow")
		ana.waitJS(`document.getElementById("working").hidden`, "the turn to end")
		bob.waitJS(`document.getElementById("working").hidden`, "the turn ended for bob too")
	})

	t.Run("a long paste becomes an attached file; a file too large is refused before sending", func(t *testing.T) {
		ana.t = t
		ana.openNewChat()
		paste := func(data string) {
			ana.js(`(() => { const dt = new DataTransfer(); `+data+`;
				document.getElementById("text").dispatchEvent(new ClipboardEvent("paste", {clipboardData: dt, bubbles: true, cancelable: true}));
				return true; })()`, new(bool))
		}
		paste(`dt.items.add(new File([new Uint8Array(Number(document.getElementById("composer").dataset.maxUpload) + 1)], "huge.txt", {type: "text/plain"}))`)
		ana.waitJS(`[...document.querySelectorAll("#toasts .toast.error")].some(e => e.innerText.includes("at most 10 MB"))`, "the size refused with the limit")
		var chosen int
		ana.js(`document.getElementById("file").files.length`, &chosen)
		if chosen != 0 {
			t.Error("the file too large stays chosen")
		}
		paste(`dt.setData("text/plain", "long paste ".repeat(20000))`) // 220,000 characters
		ana.waitJS(`document.getElementById("file-name").innerText.includes("pasted-text.txt")`, "the paste attached as a file")
		var box string
		ana.js(`document.getElementById("text").value`, &box)
		if box != "" {
			t.Errorf("the long paste also went into the box (%d characters)", len(box))
		}
		ana.run(chromedp.Click(chromedp.ID("send")))
		ana.waitJS(`[...document.querySelectorAll(".msg.mine .file-link")].some(e => e.innerText.includes("pasted-text.txt"))`, "the message with the attached text")
		ana.waitJS(`document.getElementById("working").hidden`, "the turn to end")
	})

	t.Run("the phone drawer closes with a tap beside it; messages get most of the screen", func(t *testing.T) {
		ana.t = t
		var share float64
		ana.js(`document.getElementById("messages").getBoundingClientRect().height / innerHeight`, &share)
		if share < 0.7 {
			t.Errorf("the messages get %.0f%% of a 390×844 phone's height, want at least 70%%", share*100)
		}
		ana.run(chromedp.Click(chromedp.ID("threads-toggle")))
		ana.waitJS(`document.getElementById("chat-layout").classList.contains("drawer-open")`, "the drawer open")
		ana.run(chromedp.SendKeys(chromedp.ID("q"), "paste"+kb.Enter)) // the search in the drawer
		ana.waitJS(`document.getElementById("thread-list").dataset.q === "paste"`, "the list filtered")
		var path string
		ana.js(`location.pathname`, &path)
		if !strings.HasPrefix(path, "/chat/") {
			t.Fatalf("Enter in the search left the conversation for %s", path)
		}
		ana.run(chromedp.MouseClickXY(float64(phone.width-20), float64(phone.height/2)))
		ana.waitJS(`!document.getElementById("chat-layout").classList.contains("drawer-open")`, "the drawer closed by the backdrop")
	})

	t.Run("a long message folds; Tab reaches the composer before any Copy button", func(t *testing.T) {
		ana.t = t
		ana.openNewChat()
		ana.js(`document.getElementById("text").value = Array.from({length: 300}, (_, i) => "line " + i + " of a long paste").join("\n");
			document.getElementById("text").dispatchEvent(new Event("input")); true`, new(bool))
		ana.run(chromedp.Click(chromedp.ID("send")))
		ana.waitJS(`document.querySelector(".msg.mine .fold-toggle")`, "the long message folded, with Show more")
		var height float64
		ana.js(`document.querySelector(".msg.mine").getBoundingClientRect().height`, &height)
		if height > 700 {
			t.Errorf("the folded message is %.0f px high", height)
		}
		ana.run(chromedp.Click(chromedp.CSS(".msg.mine .fold-toggle")))
		ana.waitJS(`document.querySelector(".msg.mine").getBoundingClientRect().height > 2000 && document.querySelector(".msg.mine .fold-toggle").textContent === "Show less"`,
			"the whole message shown")
		ana.waitJS(`document.getElementById("working").hidden && document.querySelectorAll(".msg .copy-msg").length >= 2`, "the turn to end")
		var order string
		ana.js(`(() => { const f = [...document.querySelectorAll("a[href], button, input, textarea, select, [tabindex]")]
			.filter(e => e.tabIndex >= 0 && !e.disabled && e.getClientRects().length);
			const text = f.indexOf(document.getElementById("text")), copy = f.findIndex(e => e.matches(".copy, .copy-msg"));
			return text + " " + copy; })()`, &order)
		if f := strings.Fields(order); len(f) != 2 || f[0] == "-1" || f[1] != "-1" {
			t.Errorf("Tab order: the composer at %s, the first Copy button at %s; want the composer reached, no Copy button on the way", f[0], f[1])
		}
		ana.run(chromedp.Focus(chromedp.ID("messages")), chromedp.KeyEvent(kb.ArrowDown))
		ana.waitJS(`document.activeElement.classList.contains("msg")`, "a message focused by the arrow key")
	})

	t.Run("delete can be undone", func(t *testing.T) {
		ana.t = t
		ana.setView(desktop, "light")
		thread := ana.openNewChat()
		ana.send("a conversation to delete")
		ana.run(chromedp.Click(chromedp.CSS("#manage summary")), chromedp.Click(chromedp.ID("delete")))
		ana.waitJS(`[...document.querySelectorAll("#toasts .toast")].some(e => e.innerText.startsWith("Deleted") && e.querySelector("button.undo"))`,
			`the "Deleted — Undo" toast`)
		ana.run(chromedp.Click(chromedp.CSS("#toasts button.undo")))
		ana.waitJS(`!document.querySelector("#toasts button.undo") && !document.getElementById("delete").disabled`, "the delete undone")
		var path string
		ana.js(`location.pathname`, &path)
		if path != "/chat/"+thread {
			t.Fatalf("Delete then Undo left the conversation for %s", path)
		}
		ana.run(chromedp.Click(chromedp.ID("delete")))
		ana.waitJS(`document.querySelector("#toasts button.undo")`, "the toast again")
		ana.waitJS(`location.pathname === "/" && document.getElementById("thread-list") && !document.querySelector('#thread-list a[href="/chat/`+thread+`"]')`,
			"the start page without the conversation, once the undo time is over")
		ana.setView(phone, "light")
	})

	t.Run("signed out in another tab: the page goes to sign-in, the text kept", func(t *testing.T) {
		ana.t = t
		thread := ana.openNewChat()
		ana.typeKeys("written before signing out")
		other := ana.secondTab()
		other.run(chromedp.Navigate(base + "/"))
		other.waitJS(`document.getElementById("whoami")`, "the second tab, signed in")
		other.run(chromedp.Click(chromedp.CSS(`.signout button[type=submit]`)))
		other.waitJS(`document.getElementById("signin-form")`, "the second tab signed out")

		// The stream's "ended" event may take the tab to sign-in first
		// (within a second); else the send does, and the text is kept.
		ana.js(`(() => { const f = document.getElementById("composer"); if (f) f.requestSubmit(); return true; })()`, new(bool))
		ana.waitJS(`location.pathname === "/signin" && document.getElementById("signin-form")`, "the first tab on the sign-in page")
		ana.run(chromedp.Evaluate[chromedp.Void](`location.hash = "#token=" + ` + jsString(anaWebToken)))
		ana.waitJS(`location.pathname === "/chat/`+thread+`" && document.getElementById("chat")`, "back in the conversation, signed in")
		ana.waitJS(`document.getElementById("text").value === "written before signing out"`, "the text kept")
		ana.js(`document.getElementById("text").value = ""; document.getElementById("text").dispatchEvent(new Event("input")); true`, new(bool))
	})

	t.Run("the older of two sign-in tabs works", func(t *testing.T) {
		ana.t = t
		ana.run(chromedp.Click(chromedp.CSS(`.signout button[type=submit]`)))
		ana.waitJS(`document.getElementById("signin-form")`, "signed out")
		newer := ana.secondTab()
		newer.run(chromedp.Navigate(base + "/signin"))
		newer.waitJS(`document.getElementById("signin-form")`, "a second sign-in tab")
		ana.run(chromedp.SendKeys(chromedp.ID("token"), anaWebToken), chromedp.Submit(chromedp.ID("token")))
		ana.waitJS(`location.pathname !== "/signin" && document.getElementById("whoami")`, "signed in from the older tab") // on the start page or back in the chat
	})

	t.Run("a sign-in tab that lost the form cookie to another tab still signs in", func(t *testing.T) {
		ana.t = t
		ana.run(chromedp.Click(chromedp.CSS(`.signout button[type=submit]`)))
		ana.waitJS(`document.getElementById("signin-form")`, "signed out")
		// Two sign-in pages loaded at the same moment (a sign-out in one tab,
		// the "ended" event in another): each got its own form token and the
		// later answer's cookie won. Here: this tab's cookie is gone when the
		// other tab's page sets a new one.
		ana.run(chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			_, err := cdp.Call(ctx, tg, network.DeleteCookies, network.DeleteCookiesParams{Name: auth.SigninCookie, URL: base})
			return err
		}))
		other := ana.secondTab()
		other.run(chromedp.Navigate(base + "/signin"))
		other.waitJS(`document.getElementById("signin-form")`, "the other sign-in tab")
		ana.run(chromedp.SendKeys(chromedp.ID("token"), anaWebToken), chromedp.Click(chromedp.CSS(`#signin-form button[type=submit]`)))
		ana.waitJS(`location.pathname !== "/signin" && document.getElementById("whoami")`, "signed in without typing the token again")
	})

	t.Run("the token never stays in the address bar", func(t *testing.T) {
		bob := newPerson(t, browser, base, bobWebToken)
		bob.run(chromedp.Navigate(base + "/signin#token=" + bobWebToken)) // the link opened again, signed in
		bob.waitJS(`location.pathname === "/" && document.getElementById("whoami")`, "the start page")
		bob.waitJS(`location.hash === "" && !location.href.includes("token")`, "the token gone from the address")
	})
}
