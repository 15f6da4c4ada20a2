package core_test

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/features/reload"
	"github.com/agentbridge/agentbridge/bridges/kits/bridgetest"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/config/profile"
	"github.com/agentbridge/agentbridge/internal/testkit"
	"github.com/agentbridge/agentbridge/store"
)

// withFallback gives the test core a second profile, gemini, that the
// bot lists in bots[].agents, and a third, other, that it does not.
func withFallback(c *config.Config) {
	coder := c.Agents["coder"]
	g := *coder
	g.Name, g.Kind, g.Command, g.Workdir, g.Model = "gemini", profile.KindACP, "gemini", "/srv/fallback", ""
	o := *coder
	o.Name, o.Workdir = "other", "/srv/other"
	c.Agents["gemini"], c.Agents["other"] = &g, &o
	c.Bots[0].Agents = []string{"gemini"}
}

// TestAgentSwitch: !agent lists the bot's profiles; !agent NAME by a
// person who wrote here moves the conversation to a listed profile: the
// old agent stops, the store keeps the profile with a fresh session, the
// thread is told it starts fresh, and the next turn spawns on that
// profile (its workdir, not resumed), with the model override and the
// grants left behind. Refused: an unlisted profile, someone who never wrote here,
// and while a turn runs (the agent is left alone).
func TestAgentSwitch(t *testing.T) {
	release := make(chan struct{})
	script := func(s *bridgetest.FakeSession, m streamjson.UserMessage) {
		if strings.Contains(m.Text, "slow") {
			<-release
		}
		bridgetest.Pong(s, m)
	}
	h := start(t, setup{script: script, configure: withFallback, access: config.Access{Admins: []string{"dave"}}})
	k := key("T1")
	h.send(k, "m1", "alice", "hello")
	h.waitText(k, "pong: hello")
	s1 := h.session(1)
	h.send(k, "c0", "dave", "!model claude-x")
	h.waitText(k, "Model set to")

	h.send(k, "c1", "alice", "!agent")
	list := h.waitText(k, "Agent profiles of this bot")
	if !strings.Contains(list.Text, "`coder` (default) ← this conversation") || !strings.Contains(list.Text, "• `gemini`") || strings.Contains(list.Text, "other") {
		t.Errorf("!agent list:\n%s", list.Text)
	}
	h.send(k, "c2", "alice", "!help")
	if help := h.waitText(k, "**Commands**"); !strings.Contains(help.Text, "!agent [NAME]") {
		t.Errorf("help lacks !agent:\n%s", help.Text)
	}

	h.send(k, "c3", "bob", "!agent gemini") // bob never wrote here
	h.waitText(k, "!agent is for the people taking part in this conversation")
	h.send(k, "c4", "alice", "!agent other")
	h.waitText(k, "`other` is not an agent profile of this bot")

	h.send(k, "m2", "alice", "slow turn")
	if _, err := s1.WaitSent(ctxT(t), 2); err != nil {
		t.Fatal(err)
	}
	h.send(k, "c5", "alice", "!agent gemini")
	h.waitText(k, "`!stop` first")
	if s1.Exited() || h.conversation(k).AgentOverride != "" {
		t.Fatal("!agent mid-turn stopped the agent or moved the conversation")
	}
	close(release)
	h.waitText(k, "pong: slow turn")
	h.waitLedgerFinal(k)

	before := h.conversation(k)
	if _, err := h.st.AddGrants(ctxT(t), before.ID, []store.Grant{{Tool: "Bash", Match: "make *", GrantedBy: "alice"}}); err != nil {
		t.Fatal(err)
	}
	h.send(k, "c6", "alice", "!agent gemini")
	h.waitText(k, "moved this conversation to agent `gemini`. It starts fresh")
	h.waitText(k, "The 1 \"Always allow\" grant(s) given to the previous agent were removed")
	if gs, err := h.st.ActiveGrants(ctxT(t), before.ID); err != nil || len(gs) != 0 {
		t.Errorf("grants after the move: %+v, %v; want none (the new agent asks again)", gs, err)
	}
	testkit.WaitUntil(t, "the old agent stopped", waitTimeout, s1.Exited)
	after := h.conversation(k)
	if after.AgentOverride != "gemini" || after.SessionID == before.SessionID || after.Model != "" || after.Agent != "coder" {
		t.Errorf("stored after the move: %+v (before: session %s)", after, before.SessionID)
	}
	h.send(k, "m3", "alice", "are you there")
	h.waitText(k, "pong: are you there")
	acq := h.pool.Acquisitions()
	if len(acq) != 2 {
		t.Fatalf("%d acquisitions, want 2", len(acq))
	}
	// An ACP agent is asked for no mode unless the conversation chose one
	// (so that it spawns like its profile's warm spares).
	if a := acq[1]; a.Limit.Profile != "gemini" || a.Opts.Workdir != "/srv/fallback" || a.Opts.Resume || a.Opts.SessionID != after.SessionID || a.Opts.Model != "" || a.Opts.PermissionMode != "" {
		t.Errorf("spawn after !agent: profile %s workdir %s resume %v session %s model %q mode %q", a.Limit.Profile, a.Opts.Workdir, a.Opts.Resume, a.Opts.SessionID, a.Opts.Model, a.Opts.PermissionMode)
	}
	h.send(k, "c7", "alice", "!agent")
	h.waitText(k, "`gemini` ← this conversation")
	h.send(k, "c7b", "alice", "!status")
	h.waitText(k, "profile `gemini`")

	// Back to the default the same way.
	h.send(k, "c8", "alice", "!agent coder")
	h.waitText(k, "moved this conversation to agent `coder`")
	h.send(k, "m4", "alice", "back home")
	h.waitText(k, "pong: back home")
	if acq := h.pool.Acquisitions(); len(acq) != 3 || acq[2].Limit.Profile != "coder" || acq[2].Opts.Resume {
		t.Errorf("acquisitions after moving back: %+v", acq)
	}
	if c := h.conversation(k); c.AgentOverride != "" {
		t.Errorf("override after moving back to the default: %q", c.AgentOverride)
	}
}

// TestAgentSwitchSurvivesRestart: the profile !agent chose is the one
// the conversation resumes on after a restart of the bridge.
func TestAgentSwitchSurvivesRestart(t *testing.T) {
	db := filepath.Join(t.TempDir(), "bridge.db")
	h := start(t, setup{configure: withFallback, dbPath: db})
	k := key("T1")
	helloOnGemini(h, k)
	sid := h.conversation(k).SessionID
	h.waitLedgerFinal(k)
	h.stop()

	h2 := start(t, setup{configure: withFallback, dbPath: db})
	h2.send(k, "m3", "alice", "after restart")
	h2.waitText(k, "pong: after restart")
	acq := h2.pool.Acquisitions()
	if len(acq) != 1 || acq[0].Limit.Profile != "gemini" || acq[0].Opts.SessionID != sid || !acq[0].Opts.Resume {
		t.Fatalf("after restart: %+v; want gemini resuming %s", acq, sid)
	}
}

// TestAgentSwitchReloadRemovesProfile: a reload whose config no longer
// lists the profile for the bot moves the conversation back to the
// default at its next message, in a fresh session, and says so.
func TestAgentSwitchReloadRemovesProfile(t *testing.T) {
	h := start(t, setup{configure: withFallback, live: true})
	k := key("T1")
	helloOnGemini(h, k)
	h.waitLedgerFinal(k)
	onGemini := h.conversation(k).SessionID

	old := h.live.Current()
	next := *old
	bot := *old.Bots[0]
	bot.Agents = nil
	next.Bots = []*config.Bot{&bot}
	d := config.Compare(old, &next)
	h.live.Set(&next, time.Now(), "test")
	if err := reload.Apply(context.Background(), h.core, reload.Reload{Diff: d}); err != nil {
		t.Fatal(err)
	}
	h.send(k, "m3", "alice", "still there?")
	h.waitText(k, "Agent `gemini` is no longer available to this bot, so this conversation is back on `coder`")
	h.waitText(k, "pong: still there?")
	acq := h.pool.Acquisitions()
	last := acq[len(acq)-1]
	c := h.conversation(k)
	if last.Limit.Profile != "coder" || last.Opts.Resume || c.AgentOverride != "" || c.SessionID == onGemini || last.Opts.SessionID != c.SessionID {
		t.Errorf("after the reload: spawn %s resume %v session %s; stored override %q session %s (gemini's %s)",
			last.Limit.Profile, last.Opts.Resume, last.Opts.SessionID, c.AgentOverride, c.SessionID, onGemini)
	}
	h.send(k, "c2", "alice", "!agent gemini")
	h.waitText(k, "`gemini` is not an agent profile of this bot")
}

// TestAgentSwitchResume: a session belongs to the profile !agent moved
// its conversation to: a thread on the default profile may not resume it
// (the Claude Code CLI would be handed an ACP agent's session), a thread
// on that profile may.
func TestAgentSwitchResume(t *testing.T) {
	h := start(t, setup{configure: withFallback})
	moved, home, fellow := key("T1"), key("T2"), key("T3")
	h.send(moved, "m1", "alice", "hello")
	h.waitText(moved, "pong: hello")
	h.send(moved, "c1", "alice", "!agent gemini")
	h.waitText(moved, "moved this conversation to agent `gemini`")
	h.send(moved, "m2", "alice", "on gemini")
	h.waitText(moved, "pong: on gemini")
	h.waitLedgerFinal(moved)
	sid := h.conversation(moved).SessionID

	h.send(home, "r1", "alice", "!resume "+sid[:8])
	h.waitText(home, "belongs to another agent profile (`gemini`)")
	h.send(fellow, "m3", "alice", "start")
	h.waitText(fellow, "pong: start")
	h.send(fellow, "c2", "alice", "!agent gemini")
	h.waitText(fellow, "moved this conversation to agent `gemini`")
	h.send(fellow, "r2", "alice", "!resume "+sid[:8])
	h.waitText(fellow, "Resumed session `"+sid[:8]+"`")
	if got := h.conversation(fellow).SessionID; got != sid {
		t.Errorf("fellow's session %s after !resume, want %s", got, sid)
	}
}

// TestAgentSwitchWarmSpares: the warm spares of a profile the bot lists
// in bots[].agents are kept as its default's are (the profile's own
// warm_spares), and a conversation !agent moves there takes one.
func TestAgentSwitchWarmSpares(t *testing.T) {
	spareID := uuid.NewString()
	pool := &warmFakePool{FakePool: bridgetest.NewFakePool(nil), spareID: spareID, onSend: func() {}}
	defer pool.Close()
	h := start(t, setup{agents: pool, configure: func(c *config.Config) {
		withFallback(c)
		c.Agents["gemini"].WarmSpares = 1
		c.Agents["coder"].Model = "opus" // the fake pool's spare fits no coder conversation
	}})
	testkit.WaitUntil(t, "KeepSpares called", waitTimeout, func() bool {
		pool.mu.Lock()
		defer pool.mu.Unlock()
		return len(pool.kept) > 0
	})
	pool.mu.Lock()
	kept := slices.Clone(pool.kept)
	pool.mu.Unlock()
	if len(kept) != 1 || kept[0].Limit.Profile != "gemini" || kept[0].Count != 1 || kept[0].Options.Workdir != "/srv/fallback" {
		t.Fatalf("KeepSpares calls %+v, want gemini's one spare", kept)
	}
	k := key("T1")
	helloOnGemini(h, k)
	if got := h.conversation(k).SessionID; got != spareID {
		t.Errorf("session %s after the move, want the gemini spare's %s", got, spareID)
	}
}

// helloOnGemini answers a first message in thread k on the default profile,
// moves the conversation to gemini with !agent and answers one there.
func helloOnGemini(h *harness, k bridges.ConversationKey) {
	h.t.Helper()
	h.send(k, "m1", "alice", "hello")
	h.waitText(k, "pong: hello")
	h.send(k, "c1", "alice", "!agent gemini")
	h.waitText(k, "moved this conversation to agent `gemini`")
	h.send(k, "m2", "alice", "on gemini")
	h.waitText(k, "pong: on gemini")
}
