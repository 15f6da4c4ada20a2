package main

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentbridge/agentbridge/internal/testkit"
	"github.com/chromedp/chromedp"
)

// gatedCLI writes a wrapper of the claude CLI that waits until the file
// it returns exists (at most two minutes) before it runs the CLI: an agent
// start exactly as slow as the test wants. It returns the profile options
// that run it (the sandbox shows the wrapper's directory and the real
// CLI's) and the gate's path.
func gatedCLI(t *testing.T) (profileOptions, string) {
	t.Helper()
	real, err := filepath.EvalSymlinks(testkit.RequireClaude(t))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	gate, wrapper := filepath.Join(dir, "open"), filepath.Join(dir, "claude")
	script := fmt.Sprintf("#!/bin/sh\ni=0\nwhile [ ! -e %q ] && [ $i -lt 1200 ]; do sleep 0.1; i=$((i+1)); done\nexec %q \"$@\"\n", gate, real)
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return profileOptions{command: wrapper, extra: fmt.Sprintf("    sandbox_binds: [{ path: %q, mode: ro }]\n", filepath.Dir(real))}, gate
}

// TestWebConsoleStarting (issue 39): "Starting the agent…" is the
// conversation's state on the server from the moment a message is accepted
// until its agent works, not only the sending page's: through the real
// binary, CLI and fake model, with an agent whose start waits for the
// test, a reload of the conversation and the live agents page both say
// "Starting the agent…"; once the agent starts, the answer arrives and the
// status goes.
func TestWebConsoleStarting(t *testing.T) {
	t.Parallel()
	po, gate := gatedCLI(t)
	browser := startBrowser(t)
	ab := startAgentBridgeWith(t, po, webBots, "WEB_TOKEN_ANA="+anaWebToken, "WEB_TOKEN_BOB="+bobWebToken)
	base := "http://" + ab.bridge.addr
	ana := newPerson(t, browser, base, anaWebToken)
	ana.setView(desktop, "light")
	thread := ana.openNewChat()

	const starting = `document.getElementById("working").dataset.state === "starting" && !document.getElementById("working").hidden &&
		document.getElementById("working-text").textContent === "Starting the agent…"`
	ana.send("hello while the agent starts")
	ana.waitJS(starting, `"Starting the agent…" after Send`)
	// The reload only once the bridge accepted the message: a reload aborts
	// a send still in flight (on a busy machine it was, and the message was
	// never accepted).
	ana.waitJS(`!document.getElementById("composer").dataset.sending`, "the send answered")
	ana.run(chromedp.Reload())
	ana.waitJS(`document.getElementById("chat").dataset.live === "1"`, "the reloaded conversation, live")
	var state, words string
	ana.js(`document.getElementById("working").dataset.state`, &state)
	ana.js(`document.getElementById("working").hidden ? "(hidden)" : document.getElementById("working-text").textContent`, &words)
	if state != "starting" || words != "Starting the agent…" {
		t.Errorf("after a reload while the agent starts, the status is %q (%s), want \"Starting the agent…\"", words, state)
	}

	admin := ana.secondTab()
	admin.run(chromedp.Navigate(base + "/admin/agents"))
	admin.waitJS(`document.getElementById("admin-content")`, "the live agents page")
	var agentState string
	admin.js(`(() => { const tr = [...document.querySelectorAll("#agents tbody tr")].find(tr => tr.querySelector('a[href="/chat/`+thread+`"]'));
		return tr ? tr.querySelector(".agent-state").innerText.trim() : "(no row)"; })()`, &agentState)
	if agentState != "Starting the agent…" {
		t.Errorf("the live agents page says %q while the agent starts, want the chat's words \"Starting the agent…\"", agentState)
	}

	if err := os.WriteFile(gate, nil, 0o644); err != nil { // the agent may start now
		t.Fatal(err)
	}
	ana.waitJS(botHas("pong: hello while the agent starts"), "the answer once the agent started")
	ana.waitJS(`document.getElementById("working").hidden && document.getElementById("working").dataset.state === ""`, "the status gone after the turn")
}
