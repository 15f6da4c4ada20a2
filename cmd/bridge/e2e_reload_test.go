package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/agent/fakemodel"
	"github.com/agentbridge/agentbridge/bridges/adapters/slack/slackfake"
	"github.com/agentbridge/agentbridge/bridges/app/healthz"
	"github.com/agentbridge/agentbridge/internal/testkit"
)

// Models of the reloaded profile: the CLI sends the profile's model with
// every request, so the fake model's records say which process answered.
const (
	modelBefore = "claude-sonnet-4-5"
	modelAfter  = "claude-haiku-4-5"
)

// TestReloadE2E (issue 29) reloads a running bridge binary — the real
// CLI against the fake model, Slack through slackfake — without a restart,
// and checks each acceptance point of the issue in one run (about 60 s):
//
//   - `bridge reload` (SIGHUP) applies generation 2: a stranger added to
//     access.users is answered, a new deny rule refuses the next matching
//     tool call without a card, a lowered limit refuses the next message
//     over it, a bot added connects and answers, a bot removed stops;
//   - the profile's model changed: a turn running during the reload ends
//     uninterrupted and only then is its agent replaced; a conversation
//     whose background task (started before the reload) runs is told, its
//     task keeps running and reports, and only then is its agent replaced
//     — resuming the same session, so the conversation keeps its history;
//   - !status shows the generation;
//   - an invalid edit of the file (picked up by the file watcher) is
//     refused with its line number in /healthz and `bridge reload`, and
//     the old config keeps working.
func TestReloadE2E(t *testing.T) {
	t.Parallel()
	team, old, added := slackfake.New(t), slackfake.New(t), slackfake.New(t)
	slackBot := func(name string, sl *slackfake.Server, access string) string {
		return fmt.Sprintf("  - name: %s\n    platform: slack\n    agent: coder\n"+
			"    slack: { bot_token: \"${SLACK_BOT_TOKEN}\", app_token: \"${SLACK_APP_TOKEN}\", api_url: %q }\n"+
			"    access:\n      users: [%s]\n", name, sl.URL(), access)
	}
	bots := "bots:\n" + slackBot("team", team, alice) + slackBot("old", old, alice) +
		"limits:\n  - { bot: team, total: { turns_per_hour: 100 } }\n"
	ab := startAgentBridgeWith(t, profileOptions{extra: "    model: " + modelBefore + "\n    rules:\n      - { tool: Read, action: allow }\n"},
		bots, "SLACK_BOT_TOKEN="+slackfake.BotToken, "SLACK_APP_TOKEN="+slackfake.AppToken)
	for _, sl := range []*slackfake.Server{team, old} {
		if err := sl.WaitForConnections(1, e2eWait); err != nil {
			t.Fatalf("a bot never connected: %v", err)
		}
	}
	e := &slackEnv{ab: &ab, slack: team, model: ab.model, bridge: ab.bridge, workdir: ab.workdir}
	cfgPath := filepath.Join(ab.dir, "bridge.yaml")

	// Before: a background task that runs until the test lets it end, and
	// a stranger who gets only the private refusal.
	flag := filepath.Join(ab.workdir, "go.flag")
	t1 := team.Mention(slackChan, alice, "[bgbash while [ ! -f "+flag+" ]; do sleep 0.2; done; echo bgdone]", "")
	e.waitThreadText(t, t1, "started in background")
	sid1 := sessionOf(t, e, "bgbash")
	team.Mention(slackChan, stranger, "hello from eve", "")
	if _, err := team.WaitForEphemeral(func(m slackfake.Ephemeral) bool { return m.User == stranger }, e2eWait); err != nil {
		t.Fatalf("the stranger got no private refusal before the reload: %v", err)
	}

	// A turn is streaming when the reload comes.
	t2 := team.Mention(slackChan, alice, "[slow 80] [slowms 100] a turn during the reload", "")
	if _, err := team.WaitForPost(func(m slackfake.Message) bool { return m.ThreadTS == t2 }, e2eWait); err != nil {
		t.Fatalf("the slow turn never started streaming: %v\nposts: %s", err, e.dump())
	}
	cfg := readFile(t, cfgPath)
	cfg = strings.Replace(cfg, "      users: ["+alice+"]\n", "      users: ["+alice+", "+stranger+"]\n", 1) // team is first
	cfg = strings.Replace(cfg, "    model: "+modelBefore+"\n", "    model: "+modelAfter+"\n", 1)
	cfg = strings.Replace(cfg, "      - { tool: Read, action: allow }\n", "      - { tool: Read, action: allow }\n      - { tool: Bash, match: \"touch *\", action: deny }\n", 1)
	cfg = strings.Replace(cfg, slackBot("old", old, alice), slackBot("added", added, alice), 1)
	testkit.WriteFile(t, cfgPath, cfg)
	out, err := reloadCmd(ab, cfgPath)
	if err != nil || !strings.Contains(out, "generation 2") {
		t.Fatalf("bridge reload: %v\n%s", err, out)
	}

	// The running turn ends whole; the agent is replaced only afterwards.
	e.waitThreadText(t, t2, "pong: [slow 80] [slowms 100] a turn during the reload")
	if strings.Contains(e.dump(), "(interrupted)") {
		t.Errorf("the reload interrupted a turn:%s", e.dump())
	}
	team.SendMessage(slackChan, alice, "after the reload", t2)
	e.waitThreadText(t, t2, "pong: after the reload")
	if m := modelOf(t, e, "after the reload"); m != modelAfter {
		t.Errorf("the next turn after the reload ran on model %q, want %q", m, modelAfter)
	}

	// The conversation with the background task was told; its agent waits.
	e.waitThreadText(t, t1, "once its background task has finished")

	// The stranger added is answered.
	t3 := team.Mention(slackChan, stranger, "eve is in now", "")
	e.waitThreadText(t, t3, "pong: eve is in now")

	// The new deny rule refuses the next matching tool call, with no card.
	team.SendMessage(slackChan, alice, "[bash touch denied-by-reload.txt]", t2)
	e.waitThreadText(t, t2, "tool said")
	if _, err := os.Stat(filepath.Join(ab.workdir, "denied-by-reload.txt")); err == nil {
		t.Error("the tool the new deny rule covers ran")
	}
	for _, p := range team.Posts() {
		if p.ThreadTS == t2 && len(p.Buttons) > 0 {
			t.Errorf("a card was shown for a call the new rule denies: %q", e.text(p))
		}
	}

	// The bot added connects and answers; the one removed has stopped.
	if err := added.WaitForConnections(1, e2eWait); err != nil {
		t.Fatalf("the added bot never connected: %v", err)
	}
	ta := added.Mention(slackChan, alice, "hello new bot", "")
	(&slackEnv{slack: added}).waitThreadText(t, ta, "pong: hello new bot")
	if err := old.WaitFor(func() bool { return !old.Connected() }, e2eWait); err != nil {
		t.Errorf("the removed bot is still connected")
	}
	if !ab.bridge.waitLog(ctxTimeout(t, e2eWait), "bot stopped by a config reload") {
		t.Error("no log of the removed bot's stop")
	}

	// The background task keeps running through all this, reports, and
	// only then is its agent replaced; the same session resumes with its
	// history on the new model.
	if strings.Contains(threadTexts(e, t1), "background done") {
		t.Fatal("the background task ended before the test let it")
	}
	testkit.WriteFile(t, flag, "go")
	e.waitThreadText(t, t1, "background done")
	team.SendMessage(slackChan, alice, "[echo-history] what do you remember", t1)
	e.waitThreadText(t, t1, "history:")
	if h := threadTexts(e, t1); !strings.Contains(h[strings.Index(h, "history:"):], "bgbash") {
		t.Errorf("the replaced agent lost the conversation's history:%s", e.dump())
	}
	if sid := sessionOf(t, e, "what do you remember"); sid != sid1 {
		t.Errorf("the replaced agent runs session %q, want the conversation's %q", sid, sid1)
	}
	if m := modelOf(t, e, "what do you remember"); m != modelAfter {
		t.Errorf("the replaced agent runs model %q, want %q", m, modelAfter)
	}
	team.SendMessage(slackChan, alice, "!status", t1)
	e.waitThreadText(t, t1, "config: generation 2")

	// An invalid edit, saved into the watched file, is refused with its
	// line; generation 2 stays in force and keeps working.
	bad := strings.Replace(cfg, "    agent: coder\n", "    agent: coder\n    colour: blue\n", 1)
	line := 1 + strings.Count(bad[:strings.Index(bad, "    colour: blue")], "\n")
	testkit.WriteFile(t, cfgPath, bad)
	want := fmt.Sprintf("bridge.yaml:%d:", line)
	hc := waitHealthConfig(t, ab.bridge, func(hc healthz.Config) bool { return len(hc.Refused) > 0 })
	if !strings.Contains(strings.Join(hc.Refused, "\n"), want) || hc.Generation != 2 {
		t.Fatalf("/healthz after an invalid edit: %+v (want a refusal naming %s, generation 2)", hc, want)
	}
	out, err = reloadCmd(ab, cfgPath)
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != exitUsage || !strings.Contains(out, want) {
		t.Errorf("bridge reload of an invalid file: %v, want exit %d naming %s:\n%s", err, exitUsage, want, out)
	}
	team.SendMessage(slackChan, alice, "the old config still works", t2)
	e.waitThreadText(t, t2, "pong: the old config still works")

	// A limit lowered below what the bot used this hour, saved into the
	// file (generation 3), refuses the next message.
	testkit.WriteFile(t, cfgPath, strings.Replace(cfg, "turns_per_hour: 100", "turns_per_hour: 2", 1))
	if hc := waitHealthConfig(t, ab.bridge, func(hc healthz.Config) bool { return hc.Generation == 3 }); hc.Trigger != "file" || len(hc.Refused) > 0 {
		t.Errorf("/healthz after a valid edit: %+v (want trigger file, no refusal)", hc)
	}
	team.SendMessage(slackChan, alice, "over the limit", t2)
	e.waitThreadText(t, t2, "your message was not sent to the agent")
	for _, r := range ab.model.MessagesRequests() {
		if strings.Contains(fakemodel.LastUserText(r), "over the limit") {
			t.Error("a message over the lowered limit reached the agent")
		}
	}
	if logs := ab.bridge.logs.String(); strings.Contains(logs, slackfake.BotToken) || strings.Contains(logs, slackfake.AppToken) {
		t.Error("the bridge's logs (reloads included) contain a Slack token")
	}
}

// reloadCmd runs `bridge reload -config path` with the bridge's env.
func reloadCmd(ab agentBridge, path string) (string, error) {
	cmd := exec.Command(bridgeBin, "reload", "-config", path)
	cmd.Dir = ab.dir
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + ab.dir}, ab.env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// waitHealthConfig polls /healthz until its config section satisfies ok.
func waitHealthConfig(t *testing.T, p *bridgeProc, ok func(healthz.Config) bool) healthz.Config {
	t.Helper()
	ctx := ctxTimeout(t, e2eWait)
	for {
		hc := healthConfigNow(t, p)
		if ok(hc) {
			return hc
		}
		select {
		case <-ctx.Done():
			t.Fatalf("/healthz config never as expected: %+v", hc)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// healthConfigNow reads the config section of the bridge's /healthz.
func healthConfigNow(t *testing.T, p *bridgeProc) healthz.Config {
	t.Helper()
	resp, err := http.Get("http://" + p.addr + "/healthz")
	if err != nil {
		t.Fatalf("GET /healthz: %v", err)
	}
	defer resp.Body.Close()
	var body healthz.Body
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || body.Config == nil {
		t.Fatalf("/healthz: %v, config %v", err, body.Config)
	}
	return *body.Config
}

// modelOf and sessionOf are the model and Claude session of the newest
// model request whose last user text contains s.
func modelOf(t *testing.T, e *slackEnv, s string) string { return lastRequest(t, e, s).Model }

func sessionOf(t *testing.T, e *slackEnv, s string) string {
	return lastRequest(t, e, s).Header.Get("X-Claude-Code-Session-Id")
}

func lastRequest(t *testing.T, e *slackEnv, s string) fakemodel.Request {
	t.Helper()
	rs := e.model.MessagesRequests()
	for i := len(rs) - 1; i >= 0; i-- {
		if strings.Contains(fakemodel.LastUserText(rs[i]), s) {
			return rs[i]
		}
	}
	t.Fatalf("no model request for %q", s)
	return fakemodel.Request{}
}

// threadTexts is every current message text of a thread.
func threadTexts(e *slackEnv, thread string) string {
	var b strings.Builder
	for _, p := range e.slack.Posts() {
		if p.ThreadTS == thread {
			cur, _ := e.slack.Current(p.Channel, p.TS)
			b.WriteString(e.text(cur) + "\n")
		}
	}
	return b.String()
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
