package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/agentbridge/agentbridge/bridges/adapters/discord/discordfake"
	"github.com/agentbridge/agentbridge/bridges/adapters/slack/slackfake"
	"github.com/agentbridge/agentbridge/bridges/app/healthz"
	"github.com/agentbridge/agentbridge/internal/testkit"
)

// healthz fetches and decodes /healthz.
func (p *bridgeProc) healthz(t *testing.T) (int, healthz.Body) {
	t.Helper()
	resp, err := http.Get("http://" + p.addr + "/healthz")
	if err != nil {
		t.Fatalf("GET /healthz: %v", err)
	}
	defer resp.Body.Close()
	var body healthz.Body
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatalf("GET /healthz: %v", err)
	}
	return resp.StatusCode, body
}

// One Slack bot whose token was revoked and one Discord bot refused the
// MESSAGE_CONTENT intent fail, each with what to do in /healthz; a Slack
// and a Discord bot next to them stay connected, and the Discord one
// still answers (its admin's !status names the failed bots).
func TestConnectionStatesE2E(t *testing.T) {
	t.Parallel()
	okSlack, revoked := slackfake.New(t), slackfake.New(t)
	revoked.FailMethod("auth.test", "token_revoked", -1)
	okDiscord := discordfake.New(t)
	noIntent := discordfake.NewWithOptions(t, discordfake.Options{DenyMessageContent: true})
	slackBot := func(name string, f *slackfake.Server) string {
		return fmt.Sprintf(`  - name: %s
    platform: slack
    agent: coder
    slack: { bot_token: "${SLACK_BOT_TOKEN}", app_token: "${SLACK_APP_TOKEN}", api_url: %q }
`, name, f.URL())
	}
	discordBot := func(name string, f *discordfake.Fake) string {
		return fmt.Sprintf(`  - name: %s
    platform: discord
    agent: coder
    discord: { token: "${DISCORD_BOT_TOKEN}", api_url: %q }
    access: { users: [%q], admins: [%q] }
`, name, f.URL(), dAlice, dAlice)
	}
	ab := startAgentBridge(t, "bots:\n"+slackBot("slack-ok", okSlack)+slackBot("slack-revoked", revoked)+
		discordBot("discord-ok", okDiscord)+discordBot("discord-nointent", noIntent),
		"SLACK_BOT_TOKEN="+slackfake.BotToken, "SLACK_APP_TOKEN="+slackfake.AppToken, "DISCORD_BOT_TOKEN="+okDiscord.Token())

	want := map[string]string{"slack-ok": "connected", "slack-revoked": "failed", "discord-ok": "connected", "discord-nointent": "failed"}
	var (
		code int
		body healthz.Body
	)
	testkit.WaitUntilSeen(t, fmt.Sprintf("/healthz states %v", want), e2eWait, func() (bool, string) {
		code, body = ab.bridge.healthz(t)
		got := map[string]string{}
		for _, b := range body.Bots {
			got[b.Bot] = b.State
		}
		return fmt.Sprint(got) == fmt.Sprint(want), fmt.Sprint(got)
	})
	if js, err := json.MarshalIndent(body, "", "  "); err == nil {
		t.Logf("/healthz: %s", js)
	}
	if code != http.StatusOK || body.Status != "degraded" {
		t.Errorf("/healthz = %d %q, want 200 degraded (two bots still serve)", code, body.Status)
	}
	for _, b := range body.Bots {
		switch b.Bot {
		case "slack-revoked":
			if b.Platform != "slack" || b.Remedy != "restart" || !strings.Contains(b.Reason, "token_revoked") ||
				!strings.Contains(b.Hint, "reinstall the app") || !strings.Contains(b.Hint, "slack.bot_token") {
				t.Errorf("revoked Slack bot: %+v", b)
			}
		case "discord-nointent":
			if b.Platform != "discord" || b.Remedy != "restart" || !strings.Contains(b.Reason, "4014") ||
				!strings.Contains(b.Hint, `enable "Message Content Intent"`) {
				t.Errorf("Discord bot without the intent: %+v", b)
			}
		default:
			if b.Reason != "" || b.Hint != "" || b.Since.IsZero() {
				t.Errorf("connected bot: %+v", b)
			}
		}
	}

	de := &discordEnv{dc: okDiscord}
	thread := de.startThread(t, "still answering?")
	de.waitText(t, thread, "pong: still answering?")
	okDiscord.SendMessage(thread, dGuild, dAlice, "!status", false)
	for _, text := range []string{"bot `slack-revoked`: failed", "bot `discord-nointent`: failed"} {
		if _, err := okDiscord.WaitForMessage(func(m discordfake.Message) bool {
			return m.AuthorIsBot && strings.Contains(m.Content, text)
		}, e2eWait); err != nil {
			t.Errorf("the working Discord bot never said %q: %v", text, err)
		}
	}
	logs := ab.bridge.logs.String()
	for _, secret := range []string{slackfake.BotToken, slackfake.AppToken, okDiscord.Token()} {
		if strings.Contains(logs, secret) {
			t.Errorf("the bridge logs show a token")
		}
	}
}
