package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/internal/testkit"
	"github.com/chromedp/chromedp"
)

// needChromium returns the headless browser's path; it skips the test when
// there is none, except under CI where that is a failure.
func needChromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	testkit.SkipOrFail(t, "chromium not on PATH (.ci/run installs the Debian package chromium)")
	return ""
}

// browser is the one headless Chromium of the test binary, started by the
// first test that needs it and closed by TestMain: a page load is cheap, a
// new Chromium is not.
var browser struct {
	once   sync.Once
	ctx    context.Context
	cancel []context.CancelFunc
	err    error
}

// startBrowser returns the shared headless Chromium; each person gets their
// own browser context (cookies, storage) from newPerson.
func startBrowser(t *testing.T) context.Context {
	t.Helper()
	path := needChromium(t)
	browser.once.Do(func() {
		opts := append(chromedp.DefaultExecAllocatorOptions[:],
			chromedp.ExecPath(path),
			chromedp.NoSandbox, // CI runs as root, where Chromium's own sandbox cannot start
			chromedp.Flag("disable-gpu", true),
			chromedp.WindowSize(1280, 860),
		)
		allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
		ctx, cancel := chromedp.NewContext(allocCtx)
		browser.ctx, browser.cancel = ctx, []context.CancelFunc{cancel, cancelAlloc}
		browser.err = chromedp.Do(ctx)
	})
	if browser.err != nil {
		t.Fatalf("start chromium: %v", browser.err)
	}
	return browser.ctx
}

// closeBrowser ends the shared Chromium, if a test started it.
func closeBrowser() {
	for _, cancel := range browser.cancel {
		cancel()
	}
}

// person is one signed-in browser context (own cookies) with one tab.
type person struct {
	t    *testing.T
	ctx  context.Context
	base string
}

// newPerson opens a fresh browser context and signs in with token through
// the sign-in link (token in the URL fragment, submitted by the page).
func newPerson(t *testing.T, browser context.Context, base, token string) *person {
	t.Helper()
	ctx, cancel := chromedp.NewContext(browser, chromedp.WithNewBrowserContext())
	t.Cleanup(cancel)
	if err := chromedp.Do(ctx); err != nil { // opens the tab: without a timeout, which would close it
		t.Fatalf("open a browser tab: %v", err)
	}
	p := &person{t: t, ctx: ctx, base: base}
	p.run(chromedp.Navigate(base + "/signin#token=" + token))
	p.waitJS(`location.pathname === "/" && !!document.getElementById("whoami")`, "signed in on the start page")
	return p
}

// run runs browser actions one by one, failing the test on an error.
func (p *person) run(actions ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, e2eWait)
	defer cancel()
	for _, a := range actions {
		// An action on an element the page replaced between chromedp's
		// query and its use of the node fails before any input is sent
		// (a busy machine lets the page re-render in between): find the
		// element again, a few times.
		err := chromedp.Do(ctx, a)
		for try := 1; err != nil && strings.Contains(err.Error(), "Could not find node with given id") && try < 5; try++ {
			err = chromedp.Do(ctx, a)
		}
		if err != nil {
			p.t.Fatalf("browser: %v\npage: %s", err, p.dump())
		}
	}
}

// eval evaluates a JS expression (awaiting a promise) into out.
func (p *person) eval(expr string, out any) error {
	ctx, cancel := context.WithTimeout(p.ctx, 10*time.Second)
	defer cancel()
	raw, err := chromedp.Run(ctx, chromedp.Evaluate[[]byte](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		return err
	}
	return json.Unmarshal(raw, out)
}

// js evaluates expr, failing the test on error.
func (p *person) js(expr string, out any) {
	p.t.Helper()
	if err := p.eval(expr, out); err != nil {
		p.t.Fatalf("evaluate %s: %v", expr, err)
	}
}

// waitJS waits until the JS expression is true (polled; the page changes
// through events, there is nothing else to wait on).
func (p *person) waitJS(expr, what string) {
	p.t.Helper()
	testkit.WaitUntilSeen(p.t, what+" ("+expr+")", e2eWait, func() (bool, string) {
		var ok bool
		if err := p.eval("!!("+expr+")", &ok); err == nil && ok {
			return true, ""
		}
		return false, "page: " + p.dump()
	})
}

// dump is the visible text of the page, for failure messages.
func (p *person) dump() string {
	var s string
	if err := p.eval(`location.href + "\n" + (document.body ? document.body.innerText : "")`, &s); err != nil {
		return "(page unreadable: " + err.Error() + ")"
	}
	return s
}

// jsString quotes s for a JS expression.
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// botHas is a JS expression: some agent message contains s.
func botHas(s string) string {
	return fmt.Sprintf(`[...document.querySelectorAll(".msg.bot")].some(e => e.innerText.includes(%s))`, jsString(s))
}

// send types text into the composer and presses Send.
func (p *person) send(text string) {
	p.t.Helper()
	p.run(chromedp.SendKeys(chromedp.ID("text"), text), chromedp.Click(chromedp.ID("send")))
	p.waitJS(fmt.Sprintf(`[...document.querySelectorAll(".msg.mine .text")].some(e => e.innerText === %s)`, jsString(strings.TrimSpace(text))),
		"my message in the conversation")
	p.waitJS(`document.getElementById("text").value === ""`, "the composer cleared")
}

// click presses the button for choice on the open card.
func (p *person) click(choice string) {
	p.t.Helper()
	sel := fmt.Sprintf(`.msg.card button[data-choice=%q]`, choice)
	p.waitJS(fmt.Sprintf(`document.querySelector(%s)`, jsString(sel)), "a card with "+choice)
	p.run(chromedp.Click(chromedp.CSS(sel)))
}

// fetchStatus runs fetch(url, init) in the page and returns the status.
func (p *person) fetchStatus(url, init string) int {
	p.t.Helper()
	var status int
	p.js(fmt.Sprintf(`fetch(%s, %s).then(r => r.status)`, jsString(url), init), &status)
	return status
}

// screenshot saves the page as dir/name when WEB_SCREENSHOTS names a
// directory (docs/ keeps the ones the README shows: WEB_SCREENSHOTS=$PWD/docs).
func (p *person) screenshot(name string) {
	p.t.Helper()
	dir := os.Getenv("WEB_SCREENSHOTS")
	if dir == "" {
		return
	}
	ctx, cancel := context.WithTimeout(p.ctx, 20*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		p.t.Fatalf("screenshot: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), png, 0o644); err != nil {
		p.t.Fatal(err)
	}
}
