package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// tinyPNG is a valid 1×1 PNG, as the browser pastes it.
const tinyPNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="

// tinyPDF is a minimal PDF with its text, as a JS string.
const tinyPDF = `%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\n% quarterly report\ntrailer << /Root 1 0 R >>\n%%EOF\n`

// TestWebConversationsUI manages conversations and sends files in the
// shared headless Chromium, through the real binary, the real CLI and the
// fake model: rename, search, share with a teammate (whose list follows
// without a reload), archive; a PDF chosen for the file input and an image
// pasted into the message box reach the model (the request bodies it got).
// Every page it opens fits at 390×844 and 1280×800, light and dark, with
// no serious or critical axe-core violation.
func TestWebConversationsUI(t *testing.T) {
	t.Parallel()
	axeJS := axeSource(t)
	browser := startBrowser(t)
	ab := startAgentBridge(t, webBots, "WEB_TOKEN_ANA="+anaWebToken, "WEB_TOKEN_BOB="+bobWebToken)
	base := "http://" + ab.bridge.addr

	ana := newPerson(t, browser, base, anaWebToken)
	bob := newPerson(t, browser, base, bobWebToken)
	ana.setView(desktop, "light")
	ana.run(chromedp.Navigate(base + "/new"))
	ana.waitJS(`document.getElementById("chat") && document.getElementById("chat").dataset.live === "1"`, "the chat page, live")
	var thread string
	ana.js(`document.getElementById("chat").dataset.thread`, &thread)
	entry := fmt.Sprintf(`document.querySelector('#thread-list a[href="/chat/%s"]')`, thread)
	ana.send("Plan the Postgres migration of the billing service, table by table")
	ana.waitJS(botHas("pong: Plan the Postgres"), "the answer")
	ana.waitJS(entry+` && `+entry+`.innerText.startsWith("Plan the Postgres migration")`, "the new conversation in the list, without a reload")

	t.Run("rename", func(t *testing.T) {
		ana.t = t
		ana.run(chromedp.Click(chromedp.CSS("#manage summary")))
		ana.js(`document.getElementById("title-input").value = ""; true`, new(bool))
		ana.run(chromedp.SendKeys(chromedp.ID("title-input"), "PG migration"), chromedp.Click(chromedp.ID("rename")))
		ana.waitJS(`document.getElementById("chat-title").innerText === "PG migration" && `+entry+`.innerText === "PG migration"`, "the new title")
	})

	t.Run("share with a teammate: his list follows live", func(t *testing.T) {
		ana.t = t
		bob.t = t
		bob.run(chromedp.Navigate(base + "/"))
		bob.waitJS(`document.body.dataset.live === "1"`, "bob's start page, live")
		bob.js(`window.notReloaded = true`, new(bool))
		ana.run(chromedp.Click(chromedp.CSS("#manage summary")))
		ana.js(`document.getElementById("share-member").value = "bob"; document.getElementById("share-role").value = "participant";
			document.getElementById("share-form").requestSubmit(); true`, new(bool))
		ana.waitJS(`document.getElementById("shares") && document.getElementById("shares").textContent.includes("bob")`, "bob listed as a teammate")
		bob.waitJS(entry+` && `+entry+`.innerText === "PG migration"`, "the shared conversation in bob's list")
		var kept bool
		bob.js(`window.notReloaded === true && document.getElementById("thread-list").innerText.includes("shared by ana")`, &kept)
		if !kept {
			t.Error("bob's list changed by a reload, or does not say who shared it")
		}
		bob.run(chromedp.Click(chromedp.CSS(`#thread-list a[href="/chat/` + thread + `"]`)))
		bob.waitJS(`document.getElementById("chat") && document.getElementById("chat").dataset.live === "1"`, "bob in the shared conversation")
		bob.send("bob: and the invoices table?")
		ana.waitJS(botHas("pong: bob: and the invoices"), "bob's message answered in ana's conversation")
		bob.screenshot("web-shared-desktop-light.png")
	})

	t.Run("search titles and messages", func(t *testing.T) {
		ana.t = t
		ana.run(chromedp.Navigate(base + "/new"))
		ana.waitJS(`document.getElementById("chat").dataset.live === "1"`, "a second conversation")
		ana.send("Why is CI red on main?")
		ana.waitJS(botHas("pong: Why is CI red"), "the answer")
		ana.run(chromedp.Navigate(base + "/"))
		ana.waitJS(`document.querySelectorAll("#thread-list li").length === 2`, "both conversations listed")
		ana.run(chromedp.Click(chromedp.ID("q")), chromedp.KeyEvent("invoices"))
		ana.waitJS(`document.querySelectorAll("#thread-list li").length === 1 && `+entry, "found by a message (bob's)")
		ana.js(`document.getElementById("q").value = ""; true`, new(bool))
		ana.run(chromedp.Click(chromedp.ID("q")), chromedp.KeyEvent("pg migr"))
		ana.waitJS(`document.querySelectorAll("#thread-list li").length === 1 && `+entry, "found by its title, words as prefixes")
		ana.screenshot("web-search-desktop-light.png")
		ana.js(`document.getElementById("q").value = ""; true`, new(bool))
		ana.run(chromedp.Click(chromedp.ID("q")), chromedp.KeyEvent("kubernetes"))
		ana.waitJS(`document.getElementById("no-threads")`, "nothing found")
	})

	t.Run("a PDF and a pasted image reach the model", func(t *testing.T) {
		ana.t = t
		ana.run(chromedp.Navigate(base + "/chat/" + thread))
		ana.waitJS(`document.getElementById("chat").dataset.live === "1"`, "the conversation")
		// Choose a PDF for the file input, as the file picker would.
		ana.js(`(() => { const dt = new DataTransfer();
			dt.items.add(new File([`+jsString(tinyPDF)+`], "report.pdf", {type: "application/pdf"}));
			const input = document.getElementById("file"); input.files = dt.files;
			input.dispatchEvent(new Event("change")); return true })()`, new(bool))
		ana.send("summarise the report")
		ana.waitJS(`document.querySelector(".msg.mine a.file-link") && document.querySelector(".msg.mine a.file-link").innerText.includes("report.pdf")`, "the PDF in the conversation")
		ana.waitJS(botHas("pong: summarise the report"), "the answer")
		// Paste an image into the message box.
		ana.js(`(() => { const bin = atob(`+jsString(tinyPNG)+`), bytes = new Uint8Array(bin.length);
			for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
			const dt = new DataTransfer(); dt.items.add(new File([bytes], "image.png", {type: "image/png"}));
			document.getElementById("text").dispatchEvent(new ClipboardEvent("paste", {clipboardData: dt, bubbles: true, cancelable: true}));
			return true })()`, new(bool))
		ana.waitJS(`document.getElementById("file-name").innerText.includes("image.png")`, "the pasted image attached")
		ana.screenshot("web-paste-desktop-light.png")
		ana.run(chromedp.Focus(chromedp.ID("text")), chromedp.KeyEvent("what is in the picture"), chromedp.KeyEvent(kb.Enter))
		ana.waitJS(`document.querySelector(".msg.mine img.upload")`, "the pasted image in the conversation")
		ana.waitJS(botHas("pong: [Image: source:"), "the answer (the fake model echoes the CLI's note on the image)")

		var pdf, image bool
		for _, r := range ab.model.MessagesRequests() {
			body := string(r.Body)
			pdf = pdf || strings.Contains(body, "report.pdf (application/pdf") && strings.Contains(body, "attached file saved for you at")
			image = image || strings.Contains(body, `"media_type":"image/png"`) && strings.Contains(body, tinyPNG) && strings.Contains(body, "what is in the picture")
		}
		if !pdf {
			t.Error("the model got no request naming the saved PDF (application/pdf) as Slack and Discord files are")
		}
		if !image {
			t.Error("the model got no request with the pasted PNG as an image block")
		}
	})

	t.Run("a tool call expands to its input and output", func(t *testing.T) {
		ana.t = t
		ana.send("[bash seq 1 1000]") // read-only: allowed without a card
		ana.waitJS(`document.querySelector(".msg.bot .tool-toggle")`, "the tool line with its Details button")
		ana.waitJS(`document.getElementById("working").hidden`, "the turn to end")
		ana.run(chromedp.Click(chromedp.CSS(".msg.bot .tool-toggle")))
		ana.waitJS(`document.querySelector(".tool-detail") && document.querySelector(".tool-detail").innerText.includes("seq 1 1000")`, "the call's input")
		ana.waitJS(`document.querySelector(".tool-detail .show-all")`, "the long output cut, with Show all")
		ana.js(`document.querySelector(".msg.bot .tool-toggle").scrollIntoView({block: "start"}); true`, new(bool))
		ana.run(chromedp.Sleep(300 * time.Millisecond))
		ana.screenshot("web-tool-details-desktop-light.png")
		ana.run(chromedp.Click(chromedp.CSS(".tool-detail .show-all")))
		ana.waitJS(`document.querySelector(".tool-detail").innerText.includes("\n1000")`, "the whole output")
	})

	t.Run("archive", func(t *testing.T) {
		ana.t = t
		ana.run(chromedp.Navigate(base + "/chat/" + thread))
		ana.waitJS(`document.getElementById("manage")`, "the conversation")
		ana.run(chromedp.Click(chromedp.CSS("#manage summary")))
		ana.js(`document.getElementById("archive-form").requestSubmit(); true`, new(bool))
		ana.waitJS(`document.getElementById("archived-tag") && !`+entry, "archived: out of the list")
		ana.run(chromedp.Click(chromedp.ID("archived-toggle")))
		ana.waitJS(entry, "in the archived list")
	})

	pages := []struct{ name, path, ready string }{
		{"chat with the manage panel", "/chat/" + thread, `document.getElementById("manage")`},
		{"archived list", "/?archived=1", `document.getElementById("thread-list")`},
		{"search", "/?q=ci", `document.getElementById("thread-list")`},
	}
	for _, v := range []viewport{phone, desktop} {
		for _, scheme := range []string{"light", "dark"} {
			t.Run(fmt.Sprintf("pages fit and pass axe, %s %s", v.name, scheme), func(t *testing.T) {
				ana.t = t
				ana.setView(v, scheme)
				for _, pg := range pages {
					ana.run(chromedp.Navigate(base + pg.path))
					ana.waitJS(pg.ready, "the "+pg.name+" page")
					ana.js(`(() => { const m = document.getElementById("manage"); if (m) m.open = true; return true })()`, new(bool))
					ana.checkFits(fmt.Sprintf("%s (%s, %s)", pg.name, v.name, scheme))
					if found := ana.axe(axeJS); len(found) > 0 {
						t.Errorf("axe on the %s page (%s, %s):\n  %s", pg.name, v.name, scheme, strings.Join(found, "\n  "))
					}
					if pg.name == "chat with the manage panel" && v == phone && scheme == "dark" {
						ana.screenshot("web-manage-phone-dark.png")
					}
				}
			})
		}
	}
}
