package main

import (
	"net/http"
	"strings"
	"testing"

	"github.com/agentbridge/agentbridge/bridges/adapters/discord/discordfake"
)

// TestDiscordE2EThreadStartOutage: through the binary, Discord answers a
// mention's thread start with 503 for a while. The bridge retries it like
// any post and the conversation waits for its thread: once Discord
// answers, the thread is started on the mention and the answer is posted
// in it — nothing in the channel, no "Create Public Threads?" warning.
func TestDiscordE2EThreadStartOutage(t *testing.T) {
	t.Parallel()
	e := startDiscordBridge(t)
	e.dc.FailThreadStart(-1, http.StatusServiceUnavailable, 0, "upstream connect error")
	id := e.dc.SendMessage(dChannel, dGuild, dAlice, "<@"+e.dc.BotID()+"> hello through the outage", true)
	if err := e.dc.Wait(e2eWait, func() bool { return e.dc.RequestCount(discordfake.RouteStartThread) >= 3 }); err != nil {
		t.Fatalf("the thread start was not retried: %d attempts", e.dc.RequestCount(discordfake.RouteStartThread))
	}
	e.dc.FailThreadStart(0, 0, 0, "")
	e.waitText(t, id, "pong: hello through the outage") // the thread has the mention's id
	for _, m := range e.dc.Messages(dChannel) {
		if m.AuthorIsBot {
			t.Errorf("the bot posted in the channel instead of the thread: %q", m.Text)
		}
	}
	if th := e.dc.Threads(); len(th) != 1 || th[0].MessageID != id {
		t.Errorf("threads = %+v, want one on the mention", th)
	}
	if logs := e.bridge.logs.String(); strings.Contains(logs, "Create Public Threads") {
		t.Error("a transient failure was logged as a missing permission")
	}
}
