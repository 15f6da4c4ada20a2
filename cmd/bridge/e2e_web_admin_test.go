package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentbridge/agentbridge/bridges/adapters/slack/slackfake"
	"github.com/chromedp/chromedp"
)

// TestWebOperatorE2E: through the real binary, the real CLI, a fake Slack
// and a real headless Chromium, an admin sees the Slack bot connected, the
// live agent of a Slack thread and its pending approval, and decides the
// approval from the operator page: the tool runs, the Slack card says who
// decided, the audit log records web:ana. A plain user gets 403.
func TestWebOperatorE2E(t *testing.T) {
	t.Parallel()
	browser := startBrowser(t)
	sl := slackfake.New(t)
	ab := startAgentBridge(t, fmt.Sprintf(`bots:
  - name: team
    platform: slack
    agent: coder
    slack: { bot_token: "${SLACK_BOT_TOKEN}", app_token: "${SLACK_APP_TOKEN}", api_url: %q }
    access:
      users: [%s]
web:
  users:
    - { name: ana, role: admin, token: "${WEB_TOKEN_ANA}" }
    - { name: bob, role: user, token: "${WEB_TOKEN_BOB}" }
`, sl.URL(), alice), "SLACK_BOT_TOKEN="+slackfake.BotToken, "SLACK_APP_TOKEN="+slackfake.AppToken,
		"WEB_TOKEN_ANA="+anaWebToken, "WEB_TOKEN_BOB="+bobWebToken)
	if err := sl.WaitForConnections(1, e2eWait); err != nil {
		t.Fatalf("bridge never opened a Socket Mode connection: %v", err)
	}
	e := &slackEnv{ab: &ab, slack: sl, model: ab.model, bridge: ab.bridge, workdir: ab.workdir}
	base := "http://" + ab.bridge.addr

	ts := sl.Mention(slackChan, alice, "[bash touch operator-approved.txt]", "")
	card := e.waitCard(t, ts)

	ana := newPerson(t, browser, base, anaWebToken)
	ana.run(chromedp.Navigate(base + "/admin"))
	ana.waitJS(`document.querySelector('#bots tr[data-bot="team"] .state') && document.querySelector('#bots tr[data-bot="team"] .state').innerText === "connected"`,
		"the Slack bot shown connected")

	ana.run(chromedp.Navigate(base + "/admin/agents"))
	ana.waitJS(`document.querySelectorAll("#agents tbody tr").length === 1 && document.querySelector("#agents tbody tr").innerText.includes("team · `+slackChan+` · `+ts+`")`,
		"the live agent of the Slack thread")
	var memory string
	ana.js(`document.querySelector("#agents tbody tr td:nth-child(6)").innerText`, &memory)
	if !strings.HasSuffix(memory, " MB") {
		t.Errorf("live agent memory shown as %q", memory)
	}

	ana.run(chromedp.Navigate(base + "/admin/approvals"))
	ana.waitJS(`document.querySelector("#approvals tbody tr") && document.querySelector("#approvals tbody tr").innerText.includes("touch operator-approved.txt")`,
		"the pending Slack approval")
	if _, err := os.Stat(filepath.Join(ab.workdir, "operator-approved.txt")); err == nil {
		t.Fatal("the tool ran before approval")
	}
	ana.run(chromedp.Click(chromedp.CSS(`#approvals button[value=allow]`)))
	ana.waitJS(`document.getElementById("notice") && document.getElementById("notice").innerText.includes("allowed")`, "the decision confirmed")
	e.waitThreadText(t, ts, "tool said")
	if _, err := os.Stat(filepath.Join(ab.workdir, "operator-approved.txt")); err != nil {
		t.Errorf("approved tool did not run: %v", err)
	}
	e.waitThreadText(t, ts, "Allowed by @ana (web console)")
	if cur, _ := sl.Current(slackChan, card.TS); len(cur.Buttons) != 0 {
		t.Errorf("the Slack card still has buttons: %q", e.text(cur))
	}

	ana.run(chromedp.Navigate(base + "/admin/audit"))
	ana.waitJS(`document.querySelector("#audit tbody tr") && document.querySelector("#audit tbody tr").innerText.includes("web:ana")`,
		"the audit log naming the web admin")

	ana.run(chromedp.Navigate(base + "/admin/config"))
	var cfgText string
	ana.js(`document.querySelector("main").innerText + document.getElementById("config-json").textContent`, &cfgText)
	for _, secret := range []string{slackfake.BotToken, slackfake.AppToken, anaWebToken, bobWebToken} {
		if strings.Contains(cfgText, secret) {
			t.Errorf("the config page shows a secret")
		}
	}

	bob := newPerson(t, browser, base, bobWebToken)
	if status := bob.fetchStatus("/admin/agents", "{}"); status != 403 {
		t.Errorf("a plain user got %d for the operator page, want 403", status)
	}
}
