package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentbridge/agentbridge/agent/fakemodel"
	"github.com/chromedp/chromedp"
)

const (
	anaWebToken = "ana-web-token-0123456789"
	bobWebToken = "bob-web-token-0123456789"
)

// webBots is a web bot whose admin is ana; bob is a plain web user.
const webBots = `bots:
  - name: console
    platform: web
    agent: coder
    access:
      admins: [ana]
web:
  users:
    - { name: ana, role: admin, token: "${WEB_TOKEN_ANA}" }
    - { name: bob, role: user, token: "${WEB_TOKEN_BOB}" }
`

// TestWebE2E drives the web console in a real headless Chromium, through
// the real bridge binary, the real Claude Code CLI and the fake model. The
// steps share one bridge, one browser and one conversation (each step
// builds on the state the last one left), to keep the suite short.
func TestWebE2E(t *testing.T) {
	t.Parallel()
	browser := startBrowser(t)
	ab := startAgentBridge(t, webBots, "WEB_TOKEN_ANA="+anaWebToken, "WEB_TOKEN_BOB="+bobWebToken)
	base := "http://" + ab.bridge.addr
	t.Cleanup(func() {
		if logs := ab.bridge.logs.String(); strings.Contains(logs, anaWebToken) || strings.Contains(logs, bobWebToken) {
			t.Errorf("bridge logs contain a web token")
		}
	})

	ana := newPerson(t, browser, base, anaWebToken)
	ana.run(chromedp.Click(chromedp.ID("new-chat")))
	ana.waitJS(`document.getElementById("chat") && window.EventSource && document.getElementById("chat").dataset.live === "1"`, "the chat page, live")

	t.Run("streamed answer with cost", func(t *testing.T) {
		ana.t = t
		// Record every text the agent's messages show, to see the answer grow.
		ana.js(`window.seen = []; new MutationObserver(() => document.querySelectorAll(".msg.bot .md").forEach(e => window.seen.push(e.innerText)))
			.observe(document.getElementById("messages"), {childList: true, subtree: true, characterData: true}); true`, new(bool))
		ana.send("[slow 8] hello there")
		ana.waitJS(botHas("pong: [slow 8] hello there"), "the final answer")
		ana.waitJS(`document.getElementById("working").hidden`, "the turn to end")
		var partial bool
		ana.js(`window.seen.some(s => s.includes("pong") && s.trim().endsWith("…"))`, &partial)
		if !partial {
			var seen []string
			ana.js(`window.seen`, &seen)
			t.Errorf("the answer never showed while streaming (a live message ending in …); seen: %q", seen)
		}
		ana.waitJS(botHas("$0."), "the turn's cost footer")
	})

	t.Run("approve a Bash tool with the button", func(t *testing.T) {
		ana.t = t
		ana.send("[bash touch web-approved.txt]")
		ana.waitJS(`document.querySelector(".msg.card") && document.querySelector(".msg.card").innerText.includes("touch web-approved.txt")`, "the permission card")
		if _, err := os.Stat(filepath.Join(ab.workdir, "web-approved.txt")); err == nil {
			t.Fatal("the tool ran before approval")
		}
		ana.click("allow")
		ana.waitJS(botHas("Allowed by @ana"), "the card showing who allowed it")
		ana.waitJS(botHas("tool said"), "the tool's result")
		ana.waitJS(`!document.querySelector(".msg.card")`, "the decided card without buttons")
		if _, err := os.Stat(filepath.Join(ab.workdir, "web-approved.txt")); err != nil {
			t.Errorf("approved tool did not run: %v", err)
		}
	})

	t.Run("answer a question card", func(t *testing.T) {
		ana.t = t
		ana.send("[ask Which colour? | Red | Blue]")
		ana.waitJS(`document.querySelector(".msg.card button[data-choice='q0.1']")`, "the question card")
		ana.screenshot("web-chat.png")
		ana.click("q0.1")
		ana.waitJS(botHas("answer was:")+` && `+botHas("Blue"), "the agent getting the answer")
	})

	t.Run("reload mid-turn shows the same state", func(t *testing.T) {
		ana.t = t
		ana.send("[bash touch web-reload.txt]")
		ana.waitJS(`document.querySelector(".msg.card button[data-choice=allow]")`, "the permission card")
		// What the conversation shows: each message's id, text and buttons.
		const snapshot = `JSON.stringify([...document.querySelectorAll("#messages .msg")].map(m => [m.id,
			(m.querySelector(".md, .text") || m).textContent, [...m.querySelectorAll("button[data-choice]")].map(b => b.dataset.choice)]))`
		var before string
		ana.js(snapshot, &before)
		ana.run(chromedp.Reload())
		ana.waitJS(`document.getElementById("chat") && document.getElementById("chat").dataset.live === "1"`, "the reloaded page, live")
		ana.waitJS(`document.querySelector(".msg.card button[data-choice=allow]")`, "the pending card after the reload")
		var after string
		var working bool
		ana.js(snapshot, &after)
		ana.js(`!document.getElementById("working").hidden`, &working)
		if before != after {
			t.Errorf("the conversation changed across the reload:\nbefore: %q\nafter:  %q", before, after)
		}
		if !working {
			t.Error("after the reload the page does not show the running turn")
		}
		ana.click("allow") // the card still works after the reload
		ana.waitJS(botHas("Allowed by @ana"), "the card decided after the reload")
		ana.waitJS(`document.getElementById("working").hidden`, "the turn to end")
	})

	t.Run("stop a turn", func(t *testing.T) {
		ana.t = t
		// 100 deltas 300 ms apart, one character each: the whole text (42
		// characters) would show only after 12.6 s, far from the Stop clicked
		// once it begins to show, also on a busy machine (100 ms apart it was
		// whole after 2.9 s, and a busy run clicked Stop later than that).
		ana.send("[slow 100] [slowms 300] a long story")
		ana.waitJS(`!document.getElementById("working").hidden`, "the turn running")
		ana.waitJS(botHas("pong: [slow 100]") /* this answer, not the earlier [slow 8] one */, "the answer streaming")
		ana.run(chromedp.Click(chromedp.ID("stop")))
		ana.waitJS(botHas("Stopped"), "the stopped turn")
		ana.waitJS(`document.getElementById("working").hidden`, "no turn running")
		var full bool
		ana.js(botHas("pong: [slow 100] [slowms 300] a long story"), &full)
		if full {
			t.Error("the stopped turn still finished its answer")
		}
	})

	t.Run("agent output renders inert", func(t *testing.T) {
		ana.t = t
		const evil = `<script>window.pwned="script"</script> <img src=x onerror="window.pwned='img'"> ` +
			`[click me](javascript:window.pwned='md-link') <a href="javascript:window.pwned='a'">raw link</a> ` +
			`<b onclick="window.pwned='b'">bold</b> [ok](https://example.com/x) end-of-evil`
		ana.send(evil)
		ana.waitJS(botHas("end-of-evil"), "the echoed answer")
		var got struct {
			Pwned    any      `json:"pwned"`
			Elements int      `json:"elements"`
			Handlers int      `json:"handlers"`
			Hrefs    []string `json:"hrefs"`
			Rels     []string `json:"rels"`
		}
		ana.js(`(() => {
			const md = [...document.querySelectorAll(".msg.bot .md")].filter(e => e.innerText.includes("end-of-evil"));
			const all = md.flatMap(e => [...e.querySelectorAll("*")]);
			return {
				pwned: window.pwned === undefined ? null : window.pwned,
				elements: all.filter(e => ["SCRIPT", "IMG", "IFRAME", "B", "OBJECT", "EMBED", "STYLE"].includes(e.tagName)).length,
				handlers: all.filter(e => [...e.attributes].some(a => a.name.startsWith("on"))).length,
				hrefs: all.filter(e => e.tagName === "A").map(e => e.getAttribute("href")),
				rels: all.filter(e => e.tagName === "A").map(e => e.getAttribute("rel") || ""),
			};
		})()`, &got)
		// Click every link the answer has: none may run script.
		ana.js(`[...document.querySelectorAll(".msg.bot .md a")].forEach(a => a.addEventListener("click", e => e.preventDefault())); true`, new(bool))
		if got.Pwned != nil {
			t.Errorf("agent output ran script: window.pwned = %v", got.Pwned)
		}
		if got.Elements != 0 || got.Handlers != 0 {
			t.Errorf("agent output kept raw HTML: %d elements, %d event handler attributes", got.Elements, got.Handlers)
		}
		for i, h := range got.Hrefs {
			if !strings.HasPrefix(h, "https://") {
				t.Errorf("link %d has href %q", i, h)
			}
			if !strings.Contains(got.Rels[i], "noopener") {
				t.Errorf("link %d has rel %q, want noopener", i, got.Rels[i])
			}
		}
		if len(got.Hrefs) != 1 {
			t.Errorf("links = %q, want only the https one", got.Hrefs)
		}
	})

	t.Run("a request without the CSRF token is refused", func(t *testing.T) {
		ana.t = t
		var thread string
		ana.js(`document.getElementById("chat").dataset.thread`, &thread)
		status := ana.fetchStatus("/chat/"+thread+"/send",
			`{method: "POST", headers: {"X-Requested-With": "fetch"}, body: new URLSearchParams({text: "csrf-less message"})}`)
		if status != 403 {
			t.Errorf("POST without CSRF token: status %d, want 403", status)
		}
		for _, r := range ab.model.MessagesRequests() {
			if strings.Contains(fakemodel.LastUserText(r), "csrf-less message") {
				t.Error("a message without the CSRF token reached the agent")
			}
		}
	})

	t.Run("a user gets 403 on an admin page", func(t *testing.T) {
		ana.t = t
		bob := newPerson(t, browser, base, bobWebToken)
		if s := bob.fetchStatus("/admin", "{}"); s != 403 {
			t.Errorf("bob GET /admin: status %d, want 403", s)
		}
		bob.run(chromedp.Navigate(base + "/admin"))
		bob.waitJS(`document.getElementById("error-message") && document.getElementById("error-message").innerText.includes("admins only")`, "the 403 page")
		if s := ana.fetchStatus("/admin", "{}"); s != 200 {
			t.Errorf("ana (admin) GET /admin: status %d, want 200", s)
		}
	})
}
