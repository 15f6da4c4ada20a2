package connlease_test

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/bridges/adapters/discord"
	"github.com/agentbridge/agentbridge/bridges/adapters/discord/discordfake"
	"github.com/agentbridge/agentbridge/bridges/features/replica/connlease"
	"github.com/agentbridge/agentbridge/bridges/kits/bridgetest"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/store"
)

const (
	discordBot = "team-discord"
	guild      = "800000000000000001"
	channel    = "100"
	alice      = "u1"
	leaseTime  = 2 * time.Second
	wait       = 15 * time.Second
)

// startDiscordReplica starts replica name serving the Discord bot of f.
func startDiscordReplica(t *testing.T, name string, st *store.Store, f *discordfake.Fake) *bridgetest.Replica {
	t.Helper()
	return startDiscordReplicaAt(t, name, st, f.Token(), f.URL())
}

// startDiscordReplicaAt starts replica name serving the Discord bot with
// token at apiURL: the adapter behind its connection gate and a real core
// (fake agents) on the replica's own pool of the shared database.
func startDiscordReplicaAt(t *testing.T, name string, st *store.Store, token, apiURL string) *bridgetest.Replica {
	t.Helper()
	logger := slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelInfo})).With("node", name)
	bot := &config.Bot{Name: discordBot, Platform: discord.Name, Agent: "coder",
		Settings: &discord.Config{Token: token, APIURL: apiURL}, Access: config.Access{Users: []string{alice}}}
	cfg := bridgetest.Config(t, bot)
	b, err := discord.New(bot, logger)
	if err != nil {
		t.Fatal(err)
	}
	return bridgetest.RunReplica(t, bridgetest.ReplicaOptions{Owner: name, Config: cfg, Store: st, Bot: discordBot, Platform: b,
		Resource: connlease.Resource(discord.Name, discordBot), TTL: leaseTime, Logger: logger}) // the pool answers "pong: <text>"
}

// waitIdentifies waits until the gateway saw n IDENTIFYs and one live
// connection, and returns when.
func waitIdentifies(t *testing.T, f *discordfake.Fake, n int, within time.Duration) time.Time {
	t.Helper()
	if err := f.WaitGateway(func(s discordfake.GatewayStats) bool { return s.Identifies == n && s.Live == 1 }, within); err != nil {
		t.Fatalf("gateway never got IDENTIFY #%d (%+v): %v", n, f.GatewayStats(), err)
	}
	return time.Now()
}

// answered waits for the bot's answer to text in thread.
func answered(t *testing.T, f *discordfake.Fake, thread, text string) {
	t.Helper()
	if _, err := f.WaitForMessage(func(m discordfake.Message) bool {
		return m.ChannelID == thread && m.AuthorIsBot && strings.Contains(m.Content, "pong: "+text)
	}, wait); err != nil {
		t.Fatalf("%q not answered in thread %s: %v", text, thread, err)
	}
}

// TestDiscordGatewayHandOver runs two replicas of a Discord bot on one
// PostgreSQL database: exactly one holds the gateway and answers; when it
// dies (its lease neither renewed nor released, its gateway gone) the
// standby connects within the lease time plus a poll and answers in the
// same thread; a replica started meanwhile stands by and, when the holder
// stops gracefully, connects at once. The fake never sees two live
// gateway connections of the bot, and every message is answered once.
func TestDiscordGatewayHandOver(t *testing.T) {
	sts := replicas(t, 3)
	f := discordfake.New(t)

	a := startDiscordReplica(t, "replica-a", sts[0], f)
	waitIdentifies(t, f, 1, wait)
	b := startDiscordReplica(t, "replica-b", sts[1], f)
	time.Sleep(leaseTime / 2) // b polls and stands by

	thread := f.SendMessage(channel, guild, alice, "<@"+f.BotID()+"> first", true)
	answered(t, f, thread, "first")

	// a dies: no renewal, no release, its gateway connection gone.
	a.Leases.Cut.Store(true)
	died := time.Now()
	a.Stop()
	took := waitIdentifies(t, f, 2, 3*leaseTime).Sub(died)
	if limit := leaseTime + leaseTime/5 + time.Second; took > limit {
		t.Errorf("the standby connected %v after the holder died, want within %v", took, limit)
	}
	t.Logf("take-over after the holder died: %v (lease %v)", took, leaseTime)
	f.SendMessage(thread, guild, alice, "second", false)
	answered(t, f, thread, "second") // the conversation a started, known from the shared database

	// a restarted (a new replica id) stands by; b stops gracefully and
	// hands the connection over at once.
	startDiscordReplica(t, "replica-a2", sts[2], f)
	time.Sleep(leaseTime / 2)
	if st := f.GatewayStats(); st.Identifies != 2 {
		t.Fatalf("a standby connected while b holds the gateway: %+v", st)
	}
	stopB := time.Now()
	b.Stop()
	took = waitIdentifies(t, f, 3, wait).Sub(stopB)
	if took > leaseTime {
		t.Errorf("the standby connected %v after a graceful stop, want well within the lease time (%v)", took, leaseTime)
	}
	t.Logf("hand-over after a graceful stop: %v", took)
	f.SendMessage(thread, guild, alice, "third", false)
	answered(t, f, thread, "third")

	if st := f.GatewayStats(); st.MaxLive != 1 {
		t.Errorf("gateway had %d live connections at once, want 1: %+v", st.MaxLive, st)
	}
	for _, text := range []string{"first", "second", "third"} {
		n := 0
		for _, m := range f.BotMessages() {
			if strings.Contains(m.Content, "pong: "+text) {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%q answered %d times, want once", text, n)
		}
	}
}
