package core_test

// Tests of "origin decides authority" (DESIGN.md §11): what a schedule or
// the agent originates is never a command and carries nobody's rights, and
// a schedule the agent asks for needs a person's approval before it exists.

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core/toolconv"
	"github.com/agentbridge/agentbridge/bridges/kits/bridgetest"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/config/profile"
	"github.com/agentbridge/agentbridge/config/schedules"
	"github.com/agentbridge/agentbridge/internal/testkit"
	"github.com/agentbridge/agentbridge/store"
)

// originAccess: dave is the admin, carol an approver, alice and bob may
// talk.
var originAccess = config.Access{Users: []string{"alice", "bob"}, Approvers: []string{"carol"}, Admins: []string{"dave"}}

// callTool calls one of the bridge's agent tools the way the CLI does
// (JSON-RPC over the session's in-process MCP server) and returns the
// result's text, "ERROR: "-prefixed for a tool error.
func callTool(t *testing.T, s *bridgetest.FakeSession, tool string, args map[string]any) string {
	t.Helper()
	srv := s.Opts.MCPServers[toolconv.ServerName]
	if srv == nil {
		t.Fatal("the session has no bridge tools")
	}
	ctx := ctxT(t)
	srv.HandleMCP(ctx, json.RawMessage(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"claude-code","version":"2.1.330"}}}`))
	srv.HandleMCP(ctx, json.RawMessage(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	params, err := json.Marshal(map[string]any{"name": tool, "arguments": args})
	if err != nil {
		t.Fatal(err)
	}
	resp := srv.HandleMCP(ctx, json.RawMessage(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":`+string(params)+`}`))
	var r struct {
		Result struct {
			Content []struct{ Text string } `json:"content"`
			IsError bool                    `json:"isError"`
		} `json:"result"`
	}
	if err := json.Unmarshal(resp, &r); err != nil || len(r.Result.Content) == 0 {
		t.Fatalf("tools/call %s answered %s (%v)", tool, resp, err)
	}
	if r.Result.IsError {
		return "ERROR: " + r.Result.Content[0].Text
	}
	return r.Result.Content[0].Text
}

// schedulesOf returns the active schedules of k's conversation.
func (h *harness) schedulesOf(k bridges.ConversationKey) []store.Schedule {
	h.t.Helper()
	all, err := h.st.SchedulesOfConversation(context.Background(), h.conversation(k).ID)
	if err != nil {
		h.t.Fatal(err)
	}
	return all
}

// agentScheduleArgs asks for a daily 09:00 UTC run of prompt.
func agentScheduleArgs(prompt string) map[string]any {
	return map[string]any{"cron": "0 9 * * *", "tz": "UTC", "prompt": prompt, "name": "sneaky"}
}

// TestAgentScheduleNeedsApproval: with the default agent_schedules (ask)
// the agent's schedule call posts a card showing cron, prompt and
// conversation and creates nothing; someone who may not decide cannot
// approve it; the turn's requester approves it and becomes its creator;
// the decision is audited. When it fires, its prompt "!mode acceptEdits"
// reaches the agent as a prompt and the mode stays as it was.
func TestAgentScheduleNeedsApproval(t *testing.T) {
	clock := bridgetest.NewFakeClock(monday8)
	h := start(t, setup{clock: clock, access: originAccess})
	k := key("T1")
	h.send(k, "m1", "dave", "hello") // the conversation's owner is an admin, as in the attack
	h.waitText(k, "pong: hello")
	s := h.session(1)

	got := callTool(t, s, "schedule", agentScheduleArgs("!mode acceptEdits"))
	if !strings.Contains(got, "Asked the people in this conversation to approve") {
		t.Fatalf("tool answered %q", got)
	}
	card := h.waitCard(k, "The agent asks for a schedule")
	for _, want := range []string{"`0 9 * * *` UTC", "!mode acceptEdits", "channel `C1`", "thread `T1`", "next Mon 5 Jan 09:00 UTC"} {
		if !strings.Contains(card.Text, want) {
			t.Errorf("card does not show %q:\n%s", want, card.Text)
		}
	}
	if !card.HasButton(bridges.ChoiceAllow) || !card.HasButton(bridges.ChoiceDeny) || card.HasButton(bridges.ChoiceAlways) {
		t.Errorf("card buttons = %+v", card.Buttons)
	}
	if n := len(h.schedulesOf(k)); n != 0 {
		t.Fatalf("%d schedules exist before anyone approved", n)
	}

	clicked, err := h.plat.Click(ctxT(t), k, card.CardID, bridges.ChoiceAllow, "bob", "bob")
	if err != nil {
		t.Fatal(err)
	}
	if r := clicked.WaitReply(t, waitTimeout); !strings.Contains(r, "only") {
		t.Errorf("bob's click answered %q", r)
	}
	if n := len(h.schedulesOf(k)); n != 0 {
		t.Fatalf("bob's click created %d schedules", n)
	}
	if _, err := h.plat.Click(ctxT(t), k, card.CardID, bridges.ChoiceAllow, "dave", "dave"); err != nil {
		t.Fatal(err)
	}
	h.waitText(k, "✅ Created by")
	scheds := h.schedulesOf(k)
	if len(scheds) != 1 || scheds[0].Source != store.ScheduleFromAgent || scheds[0].CreatedBy != "dave" || scheds[0].Prompt != "!mode acceptEdits" {
		t.Fatalf("schedules = %+v", scheds)
	}
	audit, err := h.st.ApprovalsForConversation(ctxT(t), h.conversation(k).ID)
	if err != nil || len(audit) != 1 || audit[0].ID != card.CardID || audit[0].Decision != store.DecisionAllow || audit[0].DecidedBy != "dave" ||
		audit[0].ToolName != "mcp__bridge__schedule" {
		t.Fatalf("audit = %+v, %v", audit, err)
	}

	clock.Advance(time.Hour) // 09:00: it fires
	h.waitText(k, "⏰ scheduled: sneaky")
	h.waitText(k, "pong: !mode acceptEdits")
	if sent := s.Sent(); len(sent) != 2 || sent[1].Text != "!mode acceptEdits" {
		t.Errorf("agent got %+v, want the prompt as a message", sent)
	}
	if mode := h.conversation(k).PermissionMode; mode != "" {
		t.Errorf("the scheduled prompt set the mode to %q", mode)
	}
	for _, m := range h.plat.Messages(k) {
		if strings.Contains(m.Text, "Mode set") {
			t.Errorf("a command ran: %q", m.Text)
		}
	}
	h.waitLedgerFinal(k)
}

// TestAgentScheduleCardsBounded: at most three of the agent's schedule
// requests wait for a decision at once; the fourth is refused.
func TestAgentScheduleCardsBounded(t *testing.T) {
	h := start(t, setup{access: originAccess})
	k := key("T1")
	h.send(k, "m1", "alice", "hello")
	h.waitText(k, "pong: hello")
	for i := range 3 {
		if got := callTool(t, h.session(1), "schedule", agentScheduleArgs(fmt.Sprint("p", i))); !strings.HasPrefix(got, "Asked the people") {
			t.Fatalf("request %d: %q", i, got)
		}
	}
	if got := callTool(t, h.session(1), "schedule", agentScheduleArgs("p3")); !strings.Contains(got, "ERROR: 3 schedule requests already wait") {
		t.Errorf("fourth request: %q", got)
	}
}

// TestAgentSchedulePolicies: agent_schedules off refuses with a tool
// error and allow creates at once (announced); ask checks the request
// first (a refused cron shows no card).
func TestAgentSchedulePolicies(t *testing.T) {
	for _, tt := range []struct{ policy, want string }{
		{profile.AgentSchedulesOff, "ERROR: schedules made by the agent are turned off for this agent (agent_schedules: off)"},
		{profile.AgentSchedulesAllow, "Scheduled as #1"},
		{profile.AgentSchedulesAsk, "ERROR: * * * * * fires every 1 min"},
	} {
		t.Run(tt.policy, func(t *testing.T) {
			h := start(t, setup{access: originAccess, profile: func(a *profile.Agent) { a.AgentSchedules = tt.policy }})
			k := key("T1")
			h.send(k, "m1", "alice", "hello")
			h.waitText(k, "pong: hello")
			args := agentScheduleArgs("check the build")
			if tt.policy == profile.AgentSchedulesAsk {
				args["cron"] = "* * * * *"
			}
			if got := callTool(t, h.session(1), "schedule", args); !strings.HasPrefix(got, tt.want) {
				t.Errorf("tool answered %q, want %q…", got, tt.want)
			}
			wantScheds := map[string]int{profile.AgentSchedulesAllow: 1}[tt.policy]
			if n := len(h.schedulesOf(k)); n != wantScheds {
				t.Errorf("%d schedules, want %d", n, wantScheds)
			}
			if tt.policy == profile.AgentSchedulesAllow {
				h.waitText(k, "🗓 The agent scheduled #1")
			}
			for _, m := range h.plat.Messages(k) {
				if m.CardID != "" {
					t.Errorf("a card was posted: %q", m.Text)
				}
			}
		})
	}
}

// TestAgentScheduleCardEnds: a card nobody decided can never be approved
// into existence: after approval_timeout (audited as a timeout), when the
// agent process stops (!new), and after a restart of the bridge (closed
// as expired); a refusal creates nothing either. Nothing ever fires.
func TestAgentScheduleCardEnds(t *testing.T) {
	for _, end := range []string{"timeout", "new", "restart", "refused"} {
		t.Run(end, func(t *testing.T) {
			clock := bridgetest.NewFakeClock(monday8)
			s := setup{clock: clock, access: originAccess, profile: func(a *profile.Agent) { a.ApprovalTimeout = 30 * time.Minute }}
			s.dbPath = t.TempDir() + "/bridge.db"
			h := start(t, s)
			k := key("T1")
			h.send(k, "m1", "alice", "hello")
			h.waitText(k, "pong: hello")
			callTool(t, h.session(1), "schedule", agentScheduleArgs("!mode acceptEdits"))
			card := h.waitCard(k, "The agent asks for a schedule")
			want := map[string]store.Decision{"timeout": store.DecisionTimeout, "new": store.DecisionExpired,
				"restart": store.DecisionExpired, "refused": store.DecisionDeny}[end]
			switch end {
			case "timeout":
				clock.Advance(30 * time.Minute)
				h.waitText(k, "⌛ Expired")
			case "new":
				h.send(k, "m2", "alice", "!new")
				h.waitText(k, "Started a fresh session")
			case "restart":
				h.stop()
				s.platform = h.plat // the card's message is there
				h = start(t, s)
				h.waitText(k, "bridge restarted") // the stale card, closed by the new bridge
			case "refused":
				if _, err := h.plat.Click(ctxT(t), k, card.CardID, bridges.ChoiceDeny, "carol", "carol"); err != nil {
					t.Fatal(err)
				}
				h.waitText(k, "❌ Refused by")
			}
			clicked, err := h.plat.Click(ctxT(t), k, card.CardID, bridges.ChoiceAllow, "dave", "dave")
			if err != nil {
				t.Fatal(err)
			}
			if r := clicked.WaitReply(t, waitTimeout); !strings.Contains(r, "no longer open") {
				t.Errorf("a click on the closed card answered %q", r)
			}
			if n := len(h.schedulesOf(k)); n != 0 {
				t.Fatalf("%d schedules exist after the card ended (%s)", n, end)
			}
			testkit.WaitUntil(t, "the audited decision", waitTimeout, func() bool {
				audit, err := h.st.ApprovalsForConversation(context.Background(), h.conversation(k).ID)
				return err == nil && len(audit) == 1 && audit[0].Decision == want
			})
			clock.Advance(48 * time.Hour)
			time.Sleep(50 * time.Millisecond)
			if got := headers(h.plat, k, "sneaky"); len(got) != 0 {
				t.Errorf("a schedule fired: %+v", got)
			}
		})
	}
}

// TestScheduledCommandsArePrompts runs, as the prompt of a schedule, every
// command a firing could reach before (it ran as a chat command of its
// creator, here an admin): each reaches the agent as a prompt and changes
// nothing. The agent's schedules are created as under agent_schedules:
// allow (created at once, by the conversation's owner, the worst case);
// !resume goes through a config schedule starting a new thread, where it
// would have moved a session of the channel.
func TestScheduledCommandsArePrompts(t *testing.T) {
	cmds := []struct {
		text  string
		check func(h *harness, k bridges.ConversationKey, before store.Conversation) string
	}{
		{"!mode acceptEdits", func(h *harness, k bridges.ConversationKey, _ store.Conversation) string {
			return nonEmpty("mode", h.conversation(k).PermissionMode)
		}},
		{"!mode bypassPermissions", func(h *harness, k bridges.ConversationKey, _ store.Conversation) string {
			return nonEmpty("mode", h.conversation(k).PermissionMode)
		}},
		{"!model claude-evil", func(h *harness, k bridges.ConversationKey, _ store.Conversation) string {
			return nonEmpty("model", h.conversation(k).Model)
		}},
		{"!rules rm 1", func(h *harness, k bridges.ConversationKey, _ store.Conversation) string {
			gs, err := h.st.ActiveGrants(context.Background(), h.conversation(k).ID)
			if err != nil || len(gs) != 1 {
				return fmt.Sprintf("grants = %+v, %v", gs, err)
			}
			return ""
		}},
		{`!schedule add "0 10 * * *" tz=UTC more`, func(h *harness, k bridges.ConversationKey, _ store.Conversation) string {
			if n := len(h.schedulesOf(k)); n != 1 {
				return fmt.Sprintf("%d schedules, want the firing one only", n)
			}
			return ""
		}},
		{"!schedule rm 1", func(h *harness, k bridges.ConversationKey, _ store.Conversation) string {
			if n := len(h.schedulesOf(k)); n != 1 {
				return fmt.Sprintf("%d schedules, want the firing one", n)
			}
			return ""
		}},
		{"!new", func(h *harness, k bridges.ConversationKey, before store.Conversation) string {
			if got := h.conversation(k).SessionID; got != before.SessionID {
				return "the session was reset"
			}
			return ""
		}},
		{"!stop", func(h *harness, k bridges.ConversationKey, _ store.Conversation) string {
			for _, c := range h.session(1).Calls() {
				if c == "interrupt" {
					return "the agent was interrupted"
				}
			}
			return ""
		}},
	}
	for _, tt := range cmds {
		t.Run(tt.text, func(t *testing.T) {
			clock := bridgetest.NewFakeClock(monday8)
			h := start(t, setup{clock: clock, access: originAccess, profile: func(a *profile.Agent) {
				a.AgentSchedules = profile.AgentSchedulesAllow
				a.AllowBypass = true
			}})
			k := key("T1")
			h.send(k, "m1", "dave", "hello")
			h.waitText(k, "pong: hello")
			if _, err := h.st.AddGrants(ctxT(t), h.conversation(k).ID, []store.Grant{{Tool: "Bash", Match: "ls *", GrantedBy: "dave"}}); err != nil {
				t.Fatal(err)
			}
			before := h.conversation(k)
			if got := callTool(t, h.session(1), "schedule", agentScheduleArgs(tt.text)); !strings.HasPrefix(got, "Scheduled as #1") {
				t.Fatalf("tool answered %q", got)
			}
			clock.Advance(time.Hour)
			h.waitText(k, "pong: "+tt.text)
			h.waitLedgerFinal(k)
			if sent := h.session(1).Sent(); len(sent) != 2 || sent[1].Text != tt.text {
				t.Errorf("agent got %+v, want the prompt", sent)
			}
			if problem := tt.check(h, k, before); problem != "" {
				t.Error(problem)
			}
			assertNoCommandRan(t, h, k)
		})
	}

	t.Run("!resume", func(t *testing.T) {
		clock := bridgetest.NewFakeClock(monday8)
		h := start(t, setup{clock: clock, access: originAccess, configure: withSchedules(&schedules.Schedule{
			Name: "resumer", Bot: "bot", Channel: "C1", Cron: mustCron(t, "0 9 * * *", "UTC"), Agent: "coder", NewThread: true,
			Prompt: "!resume placeholder"})})
		k := key("T1")
		h.send(k, "m1", "dave", "hello")
		h.waitText(k, "pong: hello")
		held := h.conversation(k).SessionID
		// The prompt names the session: the firing reads it from the store.
		if _, _, _, err := h.st.SyncConfigSchedules(ctxT(t), []store.Schedule{{Name: "resumer", Key: store.ConversationKey{Bot: "bot", Channel: "C1"},
			NewThread: true, Cron: "0 9 * * *", TZ: "UTC", Prompt: "!resume " + held[:8], Agent: "coder", LastFireAt: monday8}}); err != nil {
			t.Fatal(err)
		}
		waitSchedulerArmed(t, clock)
		clock.Advance(time.Hour)
		head := h.waitText(bridges.ConversationKey{Bot: "bot", Channel: "C1"}, "⏰ scheduled: resumer")
		thread := bridges.ConversationKey{Bot: "bot", Channel: "C1", Thread: head.Ref.ID}
		h.waitText(thread, "pong: !resume "+held[:8])
		h.waitLedgerFinal(thread)
		if got := h.conversation(k).SessionID; got != held {
			t.Errorf("the session moved: %s → %s", held, got)
		}
		assertNoCommandRan(t, h, thread)
	})
}

func nonEmpty(what, v string) string {
	if v != "" {
		return what + " changed to " + v
	}
	return ""
}

// assertNoCommandRan fails if k shows an answer of a command.
func assertNoCommandRan(t *testing.T, h *harness, k bridges.ConversationKey) {
	t.Helper()
	for _, m := range h.plat.Messages(k) {
		for _, sign := range []string{"Mode set", "Model set", "Removed grant", "🗓 Scheduled", "Removed schedule", "Started a fresh session",
			"Resumed session", "Usage:", "is for admins only", "⛔"} {
			if strings.Contains(m.Text, sign) {
				t.Errorf("a command answered: %q", m.Text)
			}
		}
	}
}

// TestScheduledRunCardsGoToDeciders: a permission card of a scheduled run
// names the schedule and may be decided by the schedule's creator (a
// person), approvers and admins — not by the conversation's owner, who
// wrote last; a config schedule's run has no creator, so only approvers
// and admins decide.
func TestScheduledRunCardsGoToDeciders(t *testing.T) {
	for _, src := range []string{"chat", "config"} {
		t.Run(src, func(t *testing.T) {
			clock := bridgetest.NewFakeClock(monday8)
			s := setup{clock: clock, access: originAccess, script: toolScript,
				limits: bridges.Limits{MaxMessageRunes: 4000, EditInterval: 50 * time.Millisecond}} // no buttons: typed answers count
			if src == "config" {
				s.configure = withSchedules(&schedules.Schedule{Name: "nightly", Bot: "bot", Channel: "C1", Thread: "T1",
					Cron: mustCron(t, "0 9 * * *", "UTC"), Agent: "coder", Prompt: "bash: make deploy"})
			}
			h := start(t, s)
			k := key("T1")
			h.send(k, "m1", "alice", "hello") // alice owns the conversation and wrote last
			h.waitText(k, "pong: hello")
			if src == "chat" {
				h.send(k, "m2", "bob", `!schedule add "0 9 * * *" tz=UTC bash: make deploy`)
				h.waitText(k, "🗓 Scheduled")
			}
			waitSchedulerArmed(t, clock)
			clock.Advance(time.Hour)
			card := h.waitCard(k, "make deploy")
			if !strings.Contains(card.Text, "Asked during a run of schedule #1") {
				t.Errorf("card does not name the schedule:\n%s", card.Text)
			}
			clicked, err := h.plat.Click(ctxT(t), k, card.CardID, bridges.ChoiceAllow, "alice", "alice")
			if err != nil {
				t.Fatal(err)
			}
			if r := clicked.WaitReply(t, waitTimeout); !strings.Contains(r, "only") {
				t.Errorf("the owner's click answered %q", r)
			}
			decider := "carol"
			if src == "chat" {
				decider = "bob"
			}
			if _, err := h.plat.Click(ctxT(t), k, card.CardID, bridges.ChoiceAllow, decider, decider); err != nil {
				t.Fatal(err)
			}
			h.waitText(k, "allowed ")
			if d := h.session(1).Decisions(); len(d) != 1 || !d[0].Allow {
				t.Errorf("decisions = %+v", d)
			}
		})
	}
}

// TestScheduledYesAnswersNoCard: on a platform without buttons, where a
// typed "yes" answers a card, a schedule's run "yes" (made by an
// approver) does not approve the card open at that moment: it waits, and
// reaches the agent as a prompt after the card was decided by a person.
func TestScheduledYesAnswersNoCard(t *testing.T) {
	clock := bridgetest.NewFakeClock(monday8)
	h := start(t, setup{clock: clock, access: originAccess, script: toolScript,
		limits:  bridges.Limits{MaxMessageRunes: 4000, EditInterval: 50 * time.Millisecond},
		profile: func(a *profile.Agent) { a.ApprovalTimeout = 2 * time.Hour }})
	k := key("T1")
	h.send(k, "m1", "carol", `!schedule add "0 9 * * *" tz=UTC yes`)
	h.waitText(k, "🗓 Scheduled")
	h.send(k, "m2", "alice", "bash: rm -rf build")
	card := h.waitCard(k, "rm -rf build")
	waitSchedulerArmed(t, clock)
	clock.Advance(time.Hour)
	h.waitText(k, "⏰ scheduled: yes")
	time.Sleep(100 * time.Millisecond) // the worker had the chance to misread it
	if d := h.session(1).Decisions(); len(d) != 0 {
		t.Fatalf("the scheduled yes decided the card: %+v", d)
	}
	h.send(k, "m3", "alice", "no")
	h.waitText(k, "denied: Denied by")
	h.waitText(k, "pong: yes")
	if d := h.session(1).Decisions(); len(d) != 1 || d[0].RequestID != card.CardID || d[0].Allow {
		t.Errorf("decisions = %+v, want alice's deny only", d)
	}
}
