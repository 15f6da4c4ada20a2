package core_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentbridge/agentbridge/bridges/kits/bridgetest"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/config/profile"
	"github.com/agentbridge/agentbridge/internal/testkit"
	"github.com/agentbridge/agentbridge/store"
)

func TestCommands(t *testing.T) {
	h := start(t, setup{script: toolScript, access: config.Access{Admins: []string{"dave"}}})
	k := key("T1")

	h.send(k, "c1", "alice", "!help")
	help := h.waitText(k, "**Commands**")
	for _, want := range []string{"!stop", "!new", "!model NAME", "!mode default|acceptEdits|plan", "!cost", "!status", "(admin)", "limited to the bot's admins"} {
		if !strings.Contains(help.Text, want) {
			t.Errorf("help lacks %q:\n%s", want, help.Text)
		}
	}

	h.send(k, "m1", "alice", "hello")
	h.waitText(k, "pong: hello")
	sess := h.session(1)

	// Admin-only commands.
	h.send(k, "c2", "alice", "!model claude-x")
	h.waitText(k, "!model is for admins only")
	h.send(k, "c3", "dave", "!model claude-x")
	h.waitText(k, "Model set to `claude-x`")
	h.send(k, "c4", "dave", "!mode plan")
	h.waitText(k, "Mode set to `plan`")
	h.send(k, "c5", "dave", "!mode bypassPermissions")
	h.waitText(k, "not allowed for this agent")
	testkit.WaitUntil(t, "model and mode calls", waitTimeout, func() bool {
		c := strings.Join(sess.Calls(), ",")
		return strings.Contains(c, "set_model claude-x") && strings.Contains(c, "set_permission_mode plan")
	})
	conv := h.conversation(k)
	if conv.Model != "claude-x" || conv.PermissionMode != "plan" {
		t.Errorf("overrides not stored: %+v", conv)
	}

	h.send(k, "c6", "alice", "!status")
	st := h.waitText(k, "📊 Session")
	for _, want := range []string{conv.SessionID, "live, idle", "pending approvals: 0", "claude-x", "plan"} {
		if !strings.Contains(st.Text, want) {
			t.Errorf("status lacks %q:\n%s", want, st.Text)
		}
	}
	h.send(k, "c7", "alice", "!cost")
	cost := h.waitText(k, "💰 This conversation")
	if !strings.Contains(cost.Text, "$0.0010 over 1 turns") || !strings.Contains(cost.Text, "Bot `bot`") {
		t.Errorf("cost = %q", cost.Text)
	}

	// !stop interrupts a running turn.
	h.send(k, "m2", "alice", "hang")
	if _, err := sess.WaitSent(ctxT(t), 2); err != nil {
		t.Fatal(err)
	}
	h.send(k, "c8", "alice", "!stop")
	testkit.WaitUntil(t, "an interrupt", waitTimeout, func() bool { return strings.Contains(strings.Join(sess.Calls(), ","), "interrupt") })

	// !new: fresh session id, the next message spawns a new (not resumed) session.
	h.send(k, "c9", "alice", "!new")
	h.waitText(k, "Started a fresh session")
	h.send(k, "m3", "alice", "after new")
	h.waitText(k, "pong: after new")
	conv2 := h.conversation(k)
	if conv2.SessionID == conv.SessionID {
		t.Fatal("!new kept the session id")
	}
	s2 := h.session(2)
	if s2.Opts.SessionID != conv2.SessionID || s2.Opts.Resume || s2.Opts.Model != "claude-x" || s2.Opts.PermissionMode != "plan" {
		t.Errorf("spawn after !new = %+v", s2.Opts)
	}
	if !sess.Exited() {
		t.Error("!new left the old process running")
	}
	hang, err := h.st.InboxByID(ctxT(t), sess.Sent()[1].UUID)
	if err != nil || hang.State != store.InboxCancelled {
		t.Errorf("message in flight at !new = %+v, %v", hang, err)
	}
	// Commands never reach the agent.
	for _, s := range h.pool.Sessions() {
		for _, m := range s.Sent() {
			if strings.HasPrefix(m.Text, "!") {
				t.Errorf("command reached the agent: %q", m.Text)
			}
		}
	}
}

func TestAdminCommandsDisabledWithoutAdmins(t *testing.T) {
	h := start(t, setup{})
	k := key("T1")
	h.send(k, "c1", "alice", "!mode acceptEdits")
	h.waitText(k, "!mode is disabled: this bot has no admins. Admins must be configured")
	h.send(k, "c2", "alice", "!help")
	help := h.waitText(k, "**Commands**")
	if !strings.Contains(help.Text, "Admin commands are disabled because this bot has no admins: admins must be configured") {
		t.Errorf("help does not say admin commands are disabled:\n%s", help.Text)
	}
	h.send(k, "m1", "alice", "!important: not a command")
	h.waitText(k, "pong: !important: not a command")
	if s := h.session(1); s.Opts.PermissionMode != "default" {
		t.Errorf("a refused !mode changed the spawn: %+v", s.Opts)
	}
	if c := h.conversation(k); c.PermissionMode != "" {
		t.Errorf("a refused !mode was stored: %+v", c)
	}
}

func TestBypassModeRestartsProcess(t *testing.T) {
	h := start(t, setup{access: config.Access{Admins: []string{"alice"}}, profile: func(a *profile.Agent) { a.AllowBypass = true }})
	k := key("T1")
	h.send(k, "m1", "alice", "hi")
	h.waitText(k, "pong: hi")
	first := h.session(1)
	h.send(k, "c1", "alice", "!mode bypassPermissions")
	h.waitText(k, "Mode set to `bypassPermissions`")
	h.send(k, "m2", "alice", "again")
	h.waitText(k, "pong: again")
	second := h.session(2)
	if !first.Exited() || second.Opts.PermissionMode != "bypassPermissions" || !second.Opts.Resume {
		t.Errorf("bypass needs a resumed process launched in that mode: first exited=%v second=%+v", first.Exited(), second.Opts)
	}
}

// TestStoredBypassRecheckedAtSpawn: a "!mode bypassPermissions" stored while
// allow_bypass was on does not reach the CLI once it is off, at the first
// spawn and at every later one (resume), and the conversation is told once.
func TestStoredBypassRecheckedAtSpawn(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "bridge.db")
	k := key("T1")
	{
		h := start(t, setup{dbPath: dbPath, access: config.Access{Admins: []string{"alice"}}, profile: func(a *profile.Agent) { a.AllowBypass = true }})
		h.send(k, "c1", "alice", "!mode bypassPermissions")
		h.waitText(k, "Mode set to `bypassPermissions`")
		h.stop()
	}
	// The admin turns allow_bypass off and restarts the bridge.
	plat := bridgetest.New(defaultLimits())
	h := start(t, setup{dbPath: dbPath, platform: plat, access: config.Access{Admins: []string{"alice"}},
		profile: func(a *profile.Agent) { a.PermissionMode = "acceptEdits" }})
	if c := h.conversation(k); c.PermissionMode != "bypassPermissions" {
		t.Fatalf("stored override = %q", c.PermissionMode)
	}
	h.send(k, "m1", "alice", "hi")
	h.waitText(k, "pong: hi")
	h.waitText(k, "allow_bypass is now off")
	h.send(k, "c2", "alice", "!new") // the next message spawns a second process
	h.waitText(k, "Started a fresh session")
	h.send(k, "m2", "alice", "again")
	h.waitText(k, "pong: again")
	for i, a := range h.pool.Acquisitions() {
		if a.Opts.PermissionMode != "acceptEdits" {
			t.Errorf("spawn %d: permission mode %q, want the profile's acceptEdits", i+1, a.Opts.PermissionMode)
		}
		for _, arg := range a.Opts.Args {
			if strings.Contains(arg, "dangerously") || strings.Contains(arg, "bypass") {
				t.Errorf("spawn %d: args %q", i+1, a.Opts.Args)
			}
		}
	}
	if n := len(h.pool.Acquisitions()); n != 2 {
		t.Errorf("%d spawns, want 2", n)
	}
	told := 0
	for _, m := range plat.Messages(k) {
		if strings.Contains(m.Text, "allow_bypass is now off") {
			told++
		}
	}
	if told != 1 {
		t.Errorf("told %d times about the ignored bypass, want once", told)
	}
	h.send(k, "c3", "alice", "!status")
	if st := h.waitText(k, "📊 Session"); !strings.Contains(st.Text, "mode: `acceptEdits`") {
		t.Errorf("status shows a mode the agent does not run in:\n%s", st.Text)
	}
}

func TestBackgroundTaskNotices(t *testing.T) {
	var bg *bridgetest.FakeSession
	script := func(s *bridgetest.FakeSession, m agentUserMessage) {
		bg = s
		s.Emit(agentLifecycle(m.UUID, "started"))
		s.Emit(agentTaskStarted("t1", "sleep 5 && touch done"))
		s.Emit(agentLifecycle(m.UUID, "completed"))
		s.Emit(agentResult("started it in the background", ""))
	}
	h := start(t, setup{script: script})
	k := key("T1")
	h.send(k, "m1", "alice", "run it in the background")
	h.waitText(k, "Background task started: sleep 5 && touch done")
	h.waitText(k, "started it in the background")
	bg.Emit(agentTaskDone("t1", "completed", "touched done"))
	bg.Emit(agentTextDelta("the task finished"))
	bg.Emit(agentResult("the task finished", "task-notification"))
	h.waitText(k, "Background task finished: touched done")
	h.waitText(k, "the task finished")
}
