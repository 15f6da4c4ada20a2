package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentbridge/agentbridge/internal/testkit"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// viewport is a window size the console must fit.
type viewport struct {
	name          string
	width, height int64
}

var (
	phone   = viewport{"phone", 390, 844}
	tablet  = viewport{"tablet", 820, 1180} // between the layouts: the sidebar shows, tables stack
	desktop = viewport{"desktop", 1280, 800}
)

// setView sizes the person's tab and sets the system colour scheme
// ("light" or "dark") the page sees through prefers-color-scheme.
func (p *person) setView(v viewport, scheme string) {
	p.t.Helper()
	p.run(chromedp.EmulateViewport(v.width, v.height), chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}},
		})
		return err
	}))
}

// axeSource is axe-core's browser build: .ci/run (make axe) installs the npm
// package into .tools; AXE_CORE_JS names another copy. Without it the test
// skips, except under CI.
func axeSource(t *testing.T) string {
	t.Helper()
	path := os.Getenv("AXE_CORE_JS")
	if path == "" {
		path = filepath.Join("..", "..", ".tools", "node_modules", "axe-core", "axe.min.js")
	}
	b, err := os.ReadFile(path)
	if err != nil {
		testkit.SkipOrFail(t, "axe-core not installed (make axe): %v", err)
	}
	return string(b)
}

// axe runs axe-core on the page and returns its serious and critical
// violations, one line each.
func (p *person) axe(src string) []string {
	p.t.Helper()
	var loaded bool
	p.js(`window.axe ? true : (() => { `+src+`; return !!window.axe })()`, &loaded)
	if !loaded {
		p.t.Fatal("axe-core did not load")
	}
	var found []string
	p.js(`axe.run(document, {resultTypes: ["violations"]}).then(r => r.violations
		.filter(v => v.impact === "serious" || v.impact === "critical")
		.map(v => v.impact + " " + v.id + ": " + v.help + " at " + v.nodes.slice(0, 3).map(n => n.target.join(" ")).join(", ")))`, &found)
	return found
}

// overflow is a JS expression listing what makes the page wider than the
// window: the document's own width, and elements sticking out on the
// right that are not inside a box scrolling on its own (a code block).
const overflow = `(() => {
	const out = [];
	const w = document.documentElement.clientWidth;
	if (document.documentElement.scrollWidth > w + 1) out.push("document " + document.documentElement.scrollWidth + " > " + w);
	const scrolls = e => { for (let p = e.parentElement; p; p = p.parentElement) {
		const o = getComputedStyle(p).overflowX; if (o === "auto" || o === "scroll") return true; } return false; };
	for (const e of document.querySelectorAll("body *")) {
		const r = e.getBoundingClientRect();
		if (r.width > 0 && r.height > 0 && r.right > w + 1 && !scrolls(e))
			out.push(e.tagName.toLowerCase() + (e.id ? "#" + e.id : "") + (e.className && e.className.baseVal === undefined ? "." + e.className : "") + " right " + Math.round(r.right));
	}
	return out.slice(0, 8);
})()`

// checkFits fails the test when the page scrolls sideways.
func (p *person) checkFits(what string) {
	p.t.Helper()
	var out []string
	p.js(overflow, &out)
	if len(out) > 0 {
		p.t.Errorf("%s scrolls sideways: %s", what, strings.Join(out, "; "))
	}
}

// tabTo presses Tab until the element matching the CSS selector has the
// focus (keyboard only), failing after max presses.
func (p *person) tabTo(sel string, max int) {
	p.t.Helper()
	for range max {
		var ok bool
		p.js(fmt.Sprintf(`document.activeElement === document.querySelector(%s)`, jsString(sel)), &ok)
		if ok {
			return
		}
		p.run(chromedp.KeyEvent(kb.Tab))
	}
	var at string
	p.js(`document.activeElement ? document.activeElement.outerHTML.slice(0, 120) : ""`, &at)
	p.t.Fatalf("%s not reached with %d Tab presses; the focus is on %s", sel, max, at)
}

// msgIndex is a JS expression: the position among the conversation's
// messages of the first one containing s (-1 when none).
func msgIndex(s string) string {
	return fmt.Sprintf(`[...document.querySelectorAll("#messages .msg")].findIndex(e => e.innerText.includes(%s))`, jsString(s))
}
