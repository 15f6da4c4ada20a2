package main

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Issue 26, item 5, acceptance: a profile's MCP server (mcp_servers, a
// stdio server started by the CLI inside the bwrap sandbox) asks for a
// form with elicitation/create; the Slack card shows its fields as
// buttons, a click from someone else is refused, the requester's choices
// and Submit answer it, and the server gets the values.
func TestSlackE2EElicitationCard(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bin := elicitMCPBinary(t, dir)
	e := startSlackBridgeWith(t, profileOptions{extra: fmt.Sprintf("    allowed_tools: [mcp__elicit__ask]\n"+
		"    sandbox_binds: [{ path: %q, mode: ro }]\n    mcp_servers:\n      elicit: { command: %q }\n", dir, bin)})
	ts := e.slack.Mention(slackChan, alice, `[tool mcp__elicit__ask {"kind":"form"}]`, "")
	card := e.waitCard(t, ts)
	if txt := e.text(card); !strings.Contains(txt, "Where should I deploy?") || !strings.Contains(txt, "elicit") {
		t.Fatalf("card = %q", txt)
	}
	pick := func(label string) string {
		t.Helper()
		cur, _ := e.slack.Current(card.Channel, card.TS)
		for _, b := range cur.Buttons {
			if strings.Contains(b.Text, label) {
				return b.ActionID
			}
		}
		t.Fatalf("no %q button: %+v", label, cur.Buttons)
		return ""
	}
	e.slack.Click(slackChan, card.TS, "U0STRANGER", pick("staging"), "")
	e.slack.Click(slackChan, card.TS, alice, pick("Yes"), "")
	waitEdit := func(sub string) {
		t.Helper()
		if err := e.slack.WaitFor(func() bool {
			cur, _ := e.slack.Current(card.Channel, card.TS)
			return strings.Contains(e.text(cur), sub)
		}, e2eWait); err != nil {
			cur, _ := e.slack.Current(card.Channel, card.TS)
			t.Fatalf("card never showed %q: %v\n%s", sub, err, e.text(cur))
		}
	}
	waitEdit("*Yes* ✔") // alice's pick, made after the stranger's click
	if cur, _ := e.slack.Current(card.Channel, card.TS); strings.Contains(e.text(cur), "*staging* ✔") {
		t.Fatalf("the stranger's click picked an option:\n%s", e.text(cur))
	}
	e.slack.Click(slackChan, card.TS, alice, pick("staging"), "")
	waitEdit("*staging* ✔")
	e.slack.Click(slackChan, card.TS, alice, pick("Submit"), "")
	e.waitThreadText(t, ts, `elicitation result: {"action":"accept","content":{"confirm":true,"env":"staging"}}`)
	waitEdit("Answered by")
}

// elicitMCPBinary builds the test MCP server agent/testdata/elicitmcp into
// dir and returns its path.
func elicitMCPBinary(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "elicitmcp")
	if out, err := exec.Command("go", "build", "-o", bin, "../../agent/testdata/elicitmcp").CombinedOutput(); err != nil {
		t.Fatalf("build elicitmcp: %v\n%s", err, out)
	}
	return bin
}
