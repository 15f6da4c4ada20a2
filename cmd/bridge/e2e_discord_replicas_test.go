package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/bridges/adapters/discord/discordfake"
	"github.com/agentbridge/agentbridge/internal/testkit"
	"github.com/agentbridge/agentbridge/store"
)

// discordReplicas is several bridge binaries (replicas) on one PostgreSQL
// database, each with a data_dir of its own, all on one fake Discord bot
// (one of them holds its gateway session) and the real CLI against the
// fake model.
type discordReplicas struct {
	*discordEnv
	procs []*bridgeProc
	dsn   string
	quiet bool // verbosity: quiet (no live messages, no footer)
}

// startDiscordReplicas starts n replicas with replicas: {enabled: true,
// lease: lease} and waits until one has the gateway session. botExtra
// are more keys for the bot (YAML lines indented by four spaces).
func startDiscordReplicas(t *testing.T, n int, lease time.Duration, botExtra string) *discordReplicas {
	t.Helper()
	srv := sharedPG.Need(t)
	db := srv.NewDatabaseName(t, "")
	dc := discordfake.New(t)
	po := profileOptions{maxLive: 12, extra: "    warm_spares: 0\n",
		top: fmt.Sprintf("store: { driver: postgres, dsn: %q }\nreplicas: { enabled: true, lease: %s }\n", srv.URL(db), lease)}
	ab := startAgentBridgeWith(t, po, fmt.Sprintf(`bots:
  - name: guild
    platform: discord
    agent: coder
    discord: { token: "${DISCORD_BOT_TOKEN}", api_url: %q }
%s    access:
      users: [%q]
`, dc.URL(), botExtra, dAlice), "DISCORD_BOT_TOKEN="+dc.Token())
	e := &discordReplicas{
		discordEnv: &discordEnv{dc: dc, model: ab.model, bridge: ab.bridge, workdir: ab.workdir},
		procs:      []*bridgeProc{ab.bridge},
		dsn:        srv.DSN(db),
		quiet:      strings.Contains(botExtra, "verbosity: quiet"),
	}
	for range n - 1 {
		e.procs = append(e.procs, startBridge(t, t.TempDir(), ab.cfg, ab.env...)) // data_dir of its own
	}
	if err := dc.WaitGateway(func(s discordfake.GatewayStats) bool { return s.Live > 0 }, e2eWait); err != nil {
		t.Fatalf("no replica got READY: %v", err)
	}
	return e
}

// holderOf returns the index of the replica holding the conversation of
// Discord thread th.
func (e *discordReplicas) holderOf(t *testing.T, th string) int {
	t.Helper()
	st, err := store.OpenPostgres(context.Background(), e.dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	convs, err := st.ListConversations(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range convs {
		if c.Key.Thread != th {
			continue
		}
		for i, p := range e.procs {
			if _, held := replicaHeld(t, p); slices.Contains(held, c.ID) {
				return i
			}
		}
	}
	t.Fatalf("no replica holds the conversation of thread %s", th)
	return -1
}

// botWith lists the bot's messages in th whose text contains sub.
func (e *discordReplicas) botWith(th, sub string) []discordfake.Message {
	var out []discordfake.Message
	for _, m := range e.dc.Messages(th) {
		if m.AuthorIsBot && strings.Contains(m.Text, sub) {
			out = append(out, m)
		}
	}
	return out
}

// waitFinished waits until a bot message in th shows sub as a finished
// answer (with its cost footer; a quiet bot has none, and shows only
// finished answers).
func (e *discordReplicas) waitFinished(t *testing.T, th, sub string) {
	t.Helper()
	if err := e.dc.Wait(e2eWait, func() bool {
		for _, m := range e.botWith(th, sub) {
			if e.quiet || strings.Contains(m.Text, " · $") {
				return true
			}
		}
		return false
	}); err != nil {
		t.Fatalf("thread %s never finished the answer %q: %v\n%s", th, sub, err, e.dump(th))
	}
}

// openLive lists the bot's messages in th still growing (ending with the
// live message's "…").
func (e *discordReplicas) openLive(th string) []discordfake.Message {
	var out []discordfake.Message
	for _, m := range e.dc.Messages(th) {
		if m.AuthorIsBot && strings.HasSuffix(strings.TrimSpace(m.Text), "…") {
			out = append(out, m)
		}
	}
	return out
}

// killDiscordHolderInside starts two replicas (the bot with botExtra), lets the first answer of a
// new thread finish, then sends text in it and kills the conversation's
// holder (SIGKILL) while Discord holds its answer to the first request on
// route whose body matches (the holder is inside that call). It returns
// the replicas and the thread.
func killDiscordHolderInside(t *testing.T, botExtra, route string, match func(body string) bool, text string) (*discordReplicas, string) {
	t.Helper()
	e := startDiscordReplicas(t, 2, 3*time.Second, botExtra)
	th := e.startThread(t, "hello once")
	e.waitFinished(t, th, "pong: hello once")
	h := e.holderOf(t, th)
	reached, release := e.dc.HoldResponse(route, match)
	t.Cleanup(release)
	e.dc.SendMessage(th, dGuild, dAlice, text, false)
	select {
	case <-reached:
	case <-time.After(e2eWait):
		t.Fatalf("the holder never reached %s\n%s", route, e.dump(th))
	}
	e.procs[h].kill9()
	e.waitGateway(t, h)
	return e, th
}

// waitGateway waits until a replica other than dead holds the bot's
// gateway session (its /healthz says connected): events sent before
// then, while the session of a killed holder is gone, are lost as on
// Discord.
func (e *discordReplicas) waitGateway(t *testing.T, dead int) {
	t.Helper()
	testkit.WaitUntil(t, "a surviving replica to take the gateway", e2eWait, func() bool {
		for i, p := range e.procs {
			if i != dead && gatewayConnected(p) {
				return true
			}
		}
		return false
	})
}

// gatewayConnected reports whether replica p's /healthz shows its bot
// connected (it holds the gateway session; the others are standby).
func gatewayConnected(p *bridgeProc) bool {
	resp, err := http.Get("http://" + p.addr + "/healthz")
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	var body struct {
		Bots []struct {
			State string `json:"state"`
		} `json:"bots"`
	}
	return json.NewDecoder(resp.Body).Decode(&body) == nil && len(body.Bots) == 1 && body.Bots[0].State == "connected"
}

// The holder killed inside the create that starts a live answer (Discord
// took it): the create carried the turn's key as its nonce, so the next
// holder, running the turn again, gets that message back and finishes it
// by editing — one message, none left half-written (issue 37, Deliver 2).
func TestDiscordReplicasHolderKilledInsideLiveCreate(t *testing.T) {
	t.Parallel()
	e, th := killDiscordHolderInside(t, "", discordfake.RouteCreateMessage,
		func(body string) bool { return strings.Contains(body, "…") }, "[slow 40] [slowms 100] live story")
	e.waitFinished(t, th, "live story")
	n := 0
	for _, m := range e.botWith(th, "pong: ") {
		if !strings.Contains(m.Text, "hello once") {
			n++ // the answer, or a part of it cut off
		}
	}
	if n != 1 {
		t.Errorf("the answer shows in %d messages, want one\n%s", n, e.dump(th))
	}
	if open := e.openLive(th); len(open) > 0 {
		t.Errorf("a live message stays half-written: %q\n%s", open[0].Text, e.dump(th))
	}
}

// The holder killed inside an edit of a live answer: the message stays
// half-written. The replica that takes the conversation closes it
// ("interrupted — continued below") before it answers again, in a new
// message (issue 37, Deliver 3).
func TestDiscordReplicasCutLiveClosed(t *testing.T) {
	t.Parallel()
	e, th := killDiscordHolderInside(t, "", discordfake.RouteEditMessage,
		func(body string) bool { return strings.Contains(body, "cut story") && strings.Contains(body, "…") },
		"[slow 60] [slowms 100] cut story")
	e.waitFinished(t, th, "cut story")
	if err := e.dc.Wait(e2eWait, func() bool { return len(e.botWith(th, "interrupted — continued below")) == 1 }); err != nil {
		t.Errorf("the cut live message was not closed: %v\n%s", err, e.dump(th))
	}
	if open := e.openLive(th); len(open) > 0 {
		t.Errorf("a live message stays half-written: %q\n%s", open[0].Text, e.dump(th))
	}
	finished := 0
	for _, m := range e.botWith(th, "cut story") {
		if strings.Contains(m.Text, " · $") {
			finished++
		}
	}
	if finished != 1 {
		t.Errorf("the finished answer shows %d times, want once\n%s", finished, e.dump(th))
	}
}

// The holder killed inside the final edit that turns the live message
// into the answer (Discord took it): the record of the live message names
// the reply, so the next holder makes that edit again instead of posting
// the answer beside it — shown once (issue 37, Deliver 2).
func TestDiscordReplicasHolderKilledInsideFinalEdit(t *testing.T) {
	t.Parallel()
	e, th := killDiscordHolderInside(t, "", discordfake.RouteEditMessage,
		func(body string) bool {
			return strings.Contains(body, "whole story") && strings.Contains(body, " · $")
		},
		"[slow 20] [slowms 100] whole story")
	e.dc.SendMessage(th, dGuild, dAlice, "after the edit", false)
	e.waitFinished(t, th, "pong: after the edit")
	if n := len(e.botWith(th, "whole story")); n != 1 {
		t.Errorf("the answer edited inside the killed call shows %d times, want once\n%s", n, e.dump(th))
	}
	if open := e.openLive(th); len(open) > 0 {
		t.Errorf("a live message stays half-written: %q\n%s", open[0].Text, e.dump(th))
	}
}

// The holder killed inside the create of a quick answer (one post, no
// live message: a quiet bot; Discord took it): the next holder posts the
// reply again with the same nonce and Discord returns the first message —
// shown once.
func TestDiscordReplicasHolderKilledInsidePost(t *testing.T) {
	t.Parallel()
	e, th := killDiscordHolderInside(t, "    verbosity: quiet\n", discordfake.RouteCreateMessage,
		func(body string) bool { return strings.Contains(body, "pong: quick story") }, "quick story")
	e.dc.SendMessage(th, dGuild, dAlice, "after the post", false)
	e.waitFinished(t, th, "pong: after the post")
	if n := len(e.botWith(th, "pong: quick story")); n != 1 {
		t.Errorf("the answer posted inside the killed call shows %d times, want once\n%s", n, e.dump(th))
	}
}
