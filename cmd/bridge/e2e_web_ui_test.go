package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// TestWebConsoleUI drives the console the way a team uses it every day, in
// the shared headless Chromium, through the real binary, the real CLI and
// the fake model: on a phone (390×844) and a desktop (1280×800), light and
// dark. Every page fits without sideways scrolling and has no serious or
// critical axe-core violation; a card is allowed from the phone; a card
// shows below the sentence that introduces it; Esc stops a turn; the
// keyboard alone sends, allows, denies and stops; the operator pages name
// conversations by title, say decisions in words and refresh themselves.
func TestWebConsoleUI(t *testing.T) {
	t.Parallel()
	axeJS := axeSource(t)
	browser := startBrowser(t)
	ab := startAgentBridge(t, webBots, "WEB_TOKEN_ANA="+anaWebToken, "WEB_TOKEN_BOB="+bobWebToken)
	base := "http://" + ab.bridge.addr

	ana := newPerson(t, browser, base, anaWebToken)
	ana.setView(phone, "light")
	ana.run(chromedp.Navigate(base + "/new"))
	ana.waitJS(`document.getElementById("chat") && document.getElementById("chat").dataset.live === "1"`, "the chat page, live")
	var thread string
	ana.js(`document.getElementById("chat").dataset.thread`, &thread)

	t.Run("a card after its sentence, allowed from a phone", func(t *testing.T) {
		ana.t = t
		ana.send("[bash touch phone-approved.txt]")
		ana.waitJS(`document.querySelector(".msg.card button[data-choice=allow]")`, "the permission card")
		ana.waitJS(msgIndex("Running the command.")+" >= 0", "the sentence that introduces the card")
		var intro, card int
		ana.js(msgIndex("Running the command."), &intro)
		ana.js(`[...document.querySelectorAll("#messages .msg")].findIndex(e => e.classList.contains("card"))`, &card)
		if intro > card {
			t.Errorf("the card (message %d) shows above the sentence that introduces it (message %d)", card, intro)
		}
		ana.checkFits("the chat page with a card on a phone")
		ana.screenshot("web-phone-card.png")
		ana.click("allow")
		ana.waitJS(botHas("Allowed by @ana"), "the card decided")
		ana.waitJS(botHas("tool said"), "the tool's result")
		if _, err := os.Stat(filepath.Join(ab.workdir, "phone-approved.txt")); err != nil {
			t.Errorf("the tool allowed from the phone did not run: %v", err)
		}
		ana.waitJS(`document.getElementById("working").hidden`, "the turn to end")
	})

	t.Run("Enter on an empty box does nothing", func(t *testing.T) {
		ana.t = t
		var before int
		ana.js(`document.querySelectorAll("#messages .msg").length`, &before)
		ana.run(chromedp.Focus(chromedp.ID("text")), chromedp.KeyEvent(kb.Enter), chromedp.KeyEvent("   "), chromedp.KeyEvent(kb.Enter))
		ana.run(chromedp.Sleep(300e6))
		var after, toasts int
		ana.js(`document.querySelectorAll("#messages .msg").length`, &after)
		ana.js(`document.querySelectorAll("#toasts .toast").length`, &toasts)
		if after != before || toasts != 0 {
			t.Errorf("Enter on an empty box: %d → %d messages, %d error toasts; want nothing to happen", before, after, toasts)
		}
		ana.run(chromedp.Evaluate[chromedp.Void](`document.getElementById("text").value = ""`))
	})

	t.Run("keyboard only: send, Esc stops, deny a card", func(t *testing.T) {
		ana.t = t
		ana.run(chromedp.Focus(chromedp.ID("text")), chromedp.KeyEvent("[slow 100] a long story"), chromedp.KeyEvent(kb.Enter))
		ana.waitJS(`[...document.querySelectorAll(".msg.mine .text")].some(e => e.innerText === "[slow 100] a long story")`, "the message sent with Enter")
		ana.waitJS(botHas("pong: [slow"), "the answer streaming")
		ana.run(chromedp.KeyEvent(kb.Escape))
		ana.waitJS(botHas("Stopped"), "the turn stopped by Esc")
		ana.waitJS(`document.getElementById("working").hidden`, "no turn running")
		var shown, full bool
		ana.js(`[...document.querySelectorAll(".msg.mine .text")].some(e => e.innerText.includes("!stop"))`, &shown)
		ana.js(botHas("pong: [slow 100] a long story"), &full)
		if shown {
			t.Error(`stopping showed a "!stop" message in the conversation`)
		}
		if full {
			t.Error("the turn stopped with Esc still finished its answer")
		}

		ana.run(chromedp.Focus(chromedp.ID("text")), chromedp.KeyEvent("[bash touch keyboard-denied.txt]"), chromedp.KeyEvent(kb.Enter))
		ana.waitJS(`document.querySelector(".msg.card button[data-choice=deny]")`, "the permission card")
		ana.run(chromedp.Evaluate[chromedp.Void](`document.activeElement.blur()`))
		ana.tabTo(".msg.card button[data-choice=deny]", 80)
		ana.run(chromedp.KeyEvent(kb.Enter))
		ana.waitJS(botHas("Denied by @ana"), "the card denied from the keyboard")
		ana.waitJS(`document.getElementById("working").hidden`, "the turn to end")
		if _, err := os.Stat(filepath.Join(ab.workdir, "keyboard-denied.txt")); err == nil {
			t.Error("the denied tool ran")
		}
	})

	t.Run("question card: typing answers it", func(t *testing.T) {
		ana.t = t
		ana.send("[ask Which database? | Postgres | MySQL]")
		ana.waitJS(`document.querySelector(".msg.card button[data-choice='q0.0']")`, "the question card")
		var hint bool
		ana.js(`document.querySelector(".msg.card").innerText.includes("your next message answers this question")`, &hint)
		if !hint {
			t.Error("the question card does not say that typing answers it")
		}
		ana.click("q0.0")
		ana.waitJS(botHas("answer was:")+" && "+botHas("Postgres"), "the agent getting the answer")
		ana.waitJS(`document.getElementById("working").hidden`, "the turn to end")
	})

	t.Run("highlighted code, local times, copy buttons", func(t *testing.T) {
		ana.t = t
		ana.send("[long 600]")
		ana.waitJS(`document.querySelector(".msg.bot .md pre code.language-go span[class]")`, "highlighted Go code")
		var got struct {
			Times, Zoned, Copies, Msgs int
			Tab                        string
		}
		ana.js(`({
			times: document.querySelectorAll("#messages time[datetime]").length,
			zoned: [...document.querySelectorAll("#messages time[datetime]")].filter(e => !e.innerText.includes("UTC") && e.title).length,
			copies: document.querySelectorAll("#messages .msg .copy-msg").length,
			msgs: document.querySelectorAll("#messages .msg").length,
			tab: getComputedStyle(document.querySelector(".msg .md pre")).tabSize,
		})`, &got)
		if got.Times != got.Msgs || got.Zoned != got.Msgs || got.Copies != got.Msgs {
			t.Errorf("%d messages: %d <time datetime>, %d shown in the viewer's zone, %d copy buttons", got.Msgs, got.Times, got.Zoned, got.Copies)
		}
		if got.Tab != "4" {
			t.Errorf("code tab width %q, want 4", got.Tab)
		}
	})

	// A card left open for the operator pages.
	ana.send("[bash touch operator-pending.txt]")
	ana.waitJS(`document.querySelector(".msg.card button[data-choice=allow]")`, "a pending card")

	pages := []struct{ name, path, ready string }{
		{"chat", "/chat/" + thread, `document.getElementById("chat").dataset.live === "1"`},
		{"start", "/", `document.getElementById("thread-list")`},
		{"bots", "/admin", `document.getElementById("bots")`},
		{"agents", "/admin/agents", `document.getElementById("agents")`},
		{"approvals", "/admin/approvals", `document.getElementById("approvals")`},
		{"usage", "/admin/usage", `document.getElementById("usage")`},
		{"audit", "/admin/audit", `document.getElementById("audit")`},
		{"config", "/admin/config", `document.getElementById("summary")`},
		{"not found", "/chat/no-such-conversation", `document.getElementById("error-message")`},
		{"unknown address", "/no/such/page", `document.getElementById("error-message")`},
	}
	// The screenshots docs/web.md shows (WEB_SCREENSHOTS=$PWD/docs).
	screenshots := map[string]bool{"web-chat-desktop-dark.png": true, "web-approvals-phone-light.png": true,
		"web-audit-desktop-light.png": true}
	for _, v := range []viewport{phone, tablet, desktop} {
		for _, scheme := range []string{"light", "dark"} {
			if v == tablet && scheme == "dark" {
				continue // the colours were checked at the other sizes
			}
			t.Run(fmt.Sprintf("every page fits and passes axe, %s %s", v.name, scheme), func(t *testing.T) {
				ana.t = t
				ana.setView(v, scheme)
				for _, pg := range pages {
					ana.run(chromedp.Navigate(base + pg.path))
					ana.waitJS(pg.ready, "the "+pg.name+" page")
					var dark bool
					ana.js(`matchMedia("(prefers-color-scheme: dark)").matches`, &dark)
					if dark != (scheme == "dark") {
						t.Fatalf("the page sees prefers-color-scheme dark = %v", dark)
					}
					ana.checkFits(fmt.Sprintf("%s page (%s, %s)", pg.name, v.name, scheme))
					if found := ana.axe(axeJS); len(found) > 0 {
						t.Errorf("axe on the %s page (%s, %s):\n  %s", pg.name, v.name, scheme, strings.Join(found, "\n  "))
					}
					if name := fmt.Sprintf("web-%s-%s-%s.png", pg.name, v.name, scheme); screenshots[name] {
						ana.screenshot(name)
					}
				}
			})
		}
	}

	t.Run("the sign-in page fits and passes axe; a pasted link signs in", func(t *testing.T) {
		ana.t = t
		bob := newPerson(t, browser, base, bobWebToken)
		bob.run(chromedp.Click(chromedp.CSS(`.signout button[type=submit]`)))
		bob.waitJS(`document.getElementById("signin-form")`, "the sign-in page after signing out")
		for _, v := range []viewport{phone, desktop} {
			for _, scheme := range []string{"light", "dark"} {
				bob.setView(v, scheme)
				bob.checkFits("the sign-in page (" + v.name + ", " + scheme + ")")
				if found := bob.axe(axeJS); len(found) > 0 {
					t.Errorf("axe on the sign-in page (%s, %s):\n  %s", v.name, scheme, strings.Join(found, "\n  "))
				}
			}
		}
		// Pasting the link into the same tab changes only the fragment.
		bob.run(chromedp.Evaluate[chromedp.Void](`window.samePage = true; location.href = location.pathname + "#token=" + ` + jsString(bobWebToken)))
		bob.waitJS(`location.pathname === "/" && document.getElementById("whoami")`, "signed in from the pasted link")
	})

	t.Run("dark mode toggle is remembered", func(t *testing.T) {
		ana.t = t
		ana.setView(desktop, "light")
		ana.run(chromedp.Navigate(base + "/"))
		ana.waitJS(`document.getElementById("theme-toggle")`, "the start page")
		const bg = `getComputedStyle(document.body).backgroundColor`
		var light, dark, again string
		ana.js(bg, &light)
		ana.run(chromedp.Click(chromedp.ID("theme-toggle")))
		ana.js(bg, &dark)
		ana.run(chromedp.Reload())
		ana.waitJS(`document.getElementById("theme-toggle")`, "the reloaded page")
		ana.js(bg, &again)
		var pressed string
		ana.js(`document.getElementById("theme-toggle").getAttribute("aria-pressed")`, &pressed)
		if light == dark || again != dark || pressed != "true" {
			t.Errorf("background light %s, after the toggle %s, after a reload %s (pressed %s): want dark, remembered", light, dark, again, pressed)
		}
		ana.run(chromedp.Click(chromedp.ID("theme-toggle"))) // back to the system's scheme for the next steps
	})

	t.Run("operator pages: titles, badge, live refresh, decisions in words", func(t *testing.T) {
		ana.t = t
		ana.setView(desktop, "light")
		ana.run(chromedp.Navigate(base + "/admin/approvals"))
		ana.waitJS(`document.querySelector("#approvals tbody tr")`, "the pending approval")
		var title, link, badge string
		ana.js(`document.querySelector("#approvals tbody tr .conv-title").innerText`, &title)
		ana.js(`document.querySelector("#approvals tbody tr a.conv-title").getAttribute("href")`, &link)
		ana.js(`document.getElementById("pending-badge").innerText`, &badge)
		if title != "[bash touch phone-approved.txt]" {
			t.Errorf("the conversation is shown as %q, want its first message", title)
		}
		if link != "/chat/"+thread {
			t.Errorf("the conversation links to %q, want /chat/%s", link, thread)
		}
		if badge != "1" {
			t.Errorf("the pending-approvals badge says %q, want 1", badge)
		}
		// Unchanged, the content stays as it is across a refresh (a click on
		// it is not lost); decided elsewhere (another tab), the page follows
		// without a reload.
		ana.js(`document.querySelector("#approvals tbody tr").dataset.mark = "kept"; true`, new(bool))
		ana.run(chromedp.Sleep(3500 * time.Millisecond)) // longer than one refresh
		var mark string
		ana.js(`(document.querySelector("#approvals tbody tr") || {dataset: {}}).dataset.mark || ""`, &mark)
		if mark != "kept" {
			t.Error("an unchanged operator page was replaced by its refresh")
		}
		ana.js(`window.notReloaded = true`, new(bool))
		other := newPerson(t, browser, base, anaWebToken)
		other.run(chromedp.Navigate(base + "/chat/" + thread))
		other.click("allow")
		ana.waitJS(`document.getElementById("no-approvals") && document.getElementById("pending-badge").innerText === "0"`, "the approvals page refreshed")
		var kept bool
		ana.js(`window.notReloaded === true`, &kept)
		if !kept {
			t.Error("the page reloaded instead of refreshing its content")
		}
		ana.run(chromedp.Navigate(base + "/admin/audit"))
		ana.waitJS(`document.querySelector("#audit tbody tr")`, "the audit log")
		var words []string
		ana.js(`[...document.querySelectorAll("#audit td.decision")].map(e => e.innerText)`, &words)
		for _, want := range []string{"answered: Postgres", "allowed once", "denied"} {
			found := false
			for _, w := range words {
				found = found || w == want
			}
			if !found {
				t.Errorf("the audit log says %q, want an entry %q", words, want)
			}
		}
		var json bool
		ana.js(`document.querySelector("#audit").innerText.includes("{\"")`, &json)
		if json {
			t.Error("the audit log shows JSON")
		}
	})
}
