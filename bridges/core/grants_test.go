package core_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core/metrics"
	"github.com/agentbridge/agentbridge/bridges/kits/bridgetest"
	"github.com/agentbridge/agentbridge/config/policy"
	"github.com/agentbridge/agentbridge/config/profile"
	"github.com/agentbridge/agentbridge/internal/testkit"
	"github.com/agentbridge/agentbridge/store"
)

// cardsFor counts the cards of k whose text contains sub.
func cardsFor(h *harness, k bridges.ConversationKey, sub string) int {
	n := 0
	for _, m := range h.plat.Messages(k) {
		if m.CardID != "" && strings.Contains(m.Text, sub) {
			n++
		}
	}
	return n
}

// waitDecisions waits until sess answered n permission requests.
func waitDecisions(t *testing.T, sess *bridgetest.FakeSession, n int) []bridgetest.Decision {
	t.Helper()
	testkit.WaitUntil(t, "decisions", waitTimeout, func() bool { return len(sess.Decisions()) >= n })
	return sess.Decisions()
}

// approvalCounts reads agentbridge_approvals_total by decision.
func approvalCounts(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		if mf.GetName() != "agentbridge_approvals_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "decision" {
					out[l.GetValue()] += m.GetCounter().GetValue()
				}
			}
		}
	}
	return out
}

// TestAlwaysAllowGrant: "Always allow" stores a grant of the conversation
// (who granted it, from which request), sends the CLI the rule for its
// session only, and later identical requests are allowed by the bridge
// without a card: in the same process, after !new and after a restart.
func TestAlwaysAllowGrant(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "bridge.db")
	reg := prometheus.NewRegistry()
	h := start(t, setup{script: toolScript, access: teamAccess, dbPath: dbPath, metrics: metrics.New(reg)})
	k := key("T1")
	const cmd = "git push origin main"
	h.send(k, "m1", "bob", "bash: "+cmd)
	card := h.waitCard(k, cmd)
	if !strings.Contains(card.Text, "Always allow lets this same command run again in this conversation without asking") {
		t.Errorf("card does not say what Always allow does: %q", card.Text)
	}
	if _, err := h.plat.Click(ctxT(t), k, card.CardID, bridges.ChoiceAlways, "carol", "carol"); err != nil {
		t.Fatal(err)
	}
	h.plat.WaitFor(t, k, waitTimeout, "the decided card", func(m bridgetest.Msg) bool {
		return m.CardID == card.CardID && strings.Contains(m.Text, "✅ Always allowed by @carol (conversation rule #1;")
	})
	sess := h.session(1)
	d := waitDecisions(t, sess, 1)[0]
	if !d.Allow || len(d.UpdatedPermissions) != 2 {
		t.Fatalf("decision = %+v", d)
	}
	for _, p := range d.UpdatedPermissions {
		var e map[string]any
		if err := json.Unmarshal(p, &e); err != nil || e["destination"] != "session" {
			t.Errorf("updatedPermissions entry not limited to the session: %s", p)
		}
	}
	if !strings.Contains(string(d.UpdatedPermissions[0]), `"ruleContent":"git push origin main"`) {
		t.Errorf("the CLI did not get the rule: %s", d.UpdatedPermissions[0])
	}

	conv := h.conversation(k)
	gs, err := h.st.ActiveGrants(ctxT(t), conv.ID)
	if err != nil || len(gs) != 1 {
		t.Fatalf("grants = %+v, %v", gs, err)
	}
	if g := gs[0]; g.Num != 1 || g.Tool != "Bash" || g.Match != cmd || g.GrantedBy != "carol" || g.ApprovalID != card.CardID {
		t.Errorf("grant = %+v", g)
	}
	as, _ := h.st.ApprovalsForConversation(ctxT(t), conv.ID)
	if len(as) != 1 || as[0].Decision != store.DecisionAlways || as[0].DecidedBy != "carol" || !strings.Contains(as[0].Message, `granted #1 Bash "git push origin main"`) {
		t.Errorf("audit of the click = %+v", as)
	}

	// The same request again: allowed by the grant, no card.
	h.send(k, "m2", "bob", "bash: "+cmd)
	d = waitDecisions(t, sess, 2)[1]
	if !d.Allow || len(d.UpdatedPermissions) != 0 {
		t.Errorf("second decision = %+v", d)
	}
	// Another command still asks.
	h.send(k, "m3", "bob", "bash: git push --force")
	other := h.waitCard(k, "git push --force")
	if _, err := h.plat.Click(ctxT(t), k, other.CardID, bridges.ChoiceDeny, "bob", "bob"); err != nil {
		t.Fatal(err)
	}
	waitDecisions(t, sess, 3)
	// The CLI gets the answer before the audit row is written: wait for it.
	testkit.WaitUntil(t, "the third decision audited", waitTimeout, func() bool {
		as, _ = h.st.ApprovalsForConversation(ctxT(t), conv.ID)
		return len(as) == 3 && as[2].Decision != ""
	})
	if len(as) != 3 || as[1].Decision != store.DecisionGrant || !strings.Contains(as[1].DecidedBy, `grant #1 Bash "git push origin main" (granted by carol)`) ||
		as[1].RequestedBy != "bob" || as[2].Decision != store.DecisionDeny {
		t.Errorf("audit = %+v", as)
	}
	if got := approvalCounts(t, reg); got["always"] != 1 || got["grant"] != 1 || got["deny"] != 1 {
		t.Errorf("agentbridge_approvals_total = %v", got)
	}

	// A fresh session (a new CLI without the session rule) still has it.
	h.send(k, "c1", "bob", "!new")
	h.waitText(k, "Started a fresh session")
	h.send(k, "m4", "bob", "bash: "+cmd)
	if d := waitDecisions(t, h.session(2), 1)[0]; !d.Allow {
		t.Errorf("after !new: %+v", d)
	}
	// Another conversation does not.
	h.send(key("T2"), "x1", "bob", "bash: "+cmd)
	h.waitCard(key("T2"), cmd)

	// A restarted bridge still has it.
	h.stop()
	h2 := start(t, setup{script: toolScript, access: teamAccess, dbPath: dbPath})
	h2.send(k, "m5", "bob", "bash: "+cmd)
	s2, err := h2.pool.WaitSessionFor(ctxT(t), conv.ID, 1)
	if err != nil {
		t.Fatal(err)
	}
	if d := waitDecisions(t, s2, 1)[0]; !d.Allow {
		t.Errorf("after a restart: %+v", d)
	}
	if n := cardsFor(h, k, cmd) + cardsFor(h2, k, cmd); n != 1 {
		t.Errorf("%d cards for the granted command, want 1", n)
	}
}

// TestAskRuleHidesAlwaysAllow: when a profile rule says to ask, a grant
// could never apply, so the card offers no "Always allow".
func TestAskRuleHidesAlwaysAllow(t *testing.T) {
	h := start(t, setup{script: toolScript, profile: func(a *profile.Agent) {
		a.Rules = []policy.Rule{{Tool: "Bash", Match: "git *", Action: policy.ActionAsk}}
	}})
	k := key("T1")
	h.send(k, "m1", "alice", "bash: git push")
	card := h.waitCard(k, "git push")
	if card.HasButton(bridges.ChoiceAlways) || strings.Contains(card.Text, "Always allow") {
		t.Errorf("card offers Always allow under an ask rule: %q %+v", card.Text, card.Buttons)
	}
	if _, err := h.plat.Click(ctxT(t), k, card.CardID, bridges.ChoiceDeny, "alice", "alice"); err != nil {
		t.Fatal(err)
	}
	h.send(k, "m2", "alice", "bash: make")
	if card := h.waitCard(k, "make"); !card.HasButton(bridges.ChoiceAlways) {
		t.Errorf("card without an ask rule lacks Always allow: %+v", card.Buttons)
	}
}

// TestRulesCommand: !rules lists the profile's rules and the grants with who
// granted them; admins remove a grant with !rules rm N, which is recorded,
// makes the agent forget the rule and the request ask again.
func TestRulesCommand(t *testing.T) {
	h := start(t, setup{script: toolScript, access: teamAccess, profile: func(a *profile.Agent) {
		a.Rules = []policy.Rule{{Tool: "Bash", Match: "rm -rf *", Action: policy.ActionDeny}, {Tool: "Read", Action: policy.ActionAllow}}
	}})
	k := key("T1")
	h.send(k, "m1", "alice", "bash: make test")
	card := h.waitCard(k, "make test")
	if _, err := h.plat.Click(ctxT(t), k, card.CardID, bridges.ChoiceAlways, "carol", "carol"); err != nil {
		t.Fatal(err)
	}
	h.waitText(k, "allowed ")
	sess := h.session(1)

	h.send(k, "c1", "alice", "!rules")
	list := h.waitText(k, "📜")
	for _, want := range []string{"1. deny `Bash \"rm -rf *\"`", "2. allow `Read`", "#1 allow `Bash \"make test\"` — granted by @carol on 20", "`!rules rm N`"} {
		if !strings.Contains(list.Text, want) {
			t.Errorf("!rules lacks %q:\n%s", want, list.Text)
		}
	}
	h.send(k, "c2", "alice", "!help")
	if help := h.waitText(k, "**Commands**"); !strings.Contains(help.Text, "!rules [rm N]") {
		t.Errorf("help lacks !rules:\n%s", help.Text)
	}

	h.send(k, "c3", "alice", "!rules rm 1")
	h.waitText(k, "!rules rm is for admins only")
	h.send(k, "c4", "dave", "!rules rm x")
	h.waitText(k, "Usage: `!rules`")
	h.send(k, "c5", "dave", "!rules rm 1")
	h.waitText(k, "🗑 Removed grant #1 (`Bash \"make test\"`, granted by @carol)")
	all, err := h.st.GrantsForConversation(ctxT(t), h.conversation(k).ID)
	if err != nil || len(all) != 1 || all[0].Active() || all[0].RemovedBy != "dave" {
		t.Fatalf("grants after removal = %+v, %v", all, err)
	}
	// The running CLI held the rule for its session: it was restarted.
	testkit.WaitUntil(t, "the agent restarted", waitTimeout, sess.Exited)
	h.send(k, "c6", "dave", "!rules rm 1")
	h.waitText(k, "There is no grant #1")
	h.send(k, "m2", "alice", "bash: make test")
	h.plat.WaitFor(t, k, waitTimeout, "a new card", func(m bridgetest.Msg) bool {
		return m.CardID != "" && m.CardID != card.CardID && strings.Contains(m.Text, "make test")
	})
}

// TestCardDecidersAreTheTurnsRequesters: a card may be decided by the
// people whose messages started the turn, approvers and admins — not by the
// conversation's owner or an earlier author when someone else's message
// started the turn, neither by a click nor by a typed reply.
func TestCardDecidersAreTheTurnsRequesters(t *testing.T) {
	t.Run("click", func(t *testing.T) {
		h := start(t, setup{script: toolScript, access: teamAccess})
		k := key("T1")
		h.send(k, "m1", "alice", "hello") // alice owns the conversation
		h.waitText(k, "pong: hello")
		h.send(k, "m2", "erin", "hi") // erin wrote earlier too
		h.waitText(k, "pong: hi")
		h.send(k, "m3", "bob", "bash: make deploy")
		card := h.waitCard(k, "make deploy")
		sess := h.session(1)
		for _, u := range []string{"alice", "erin"} {
			clicked, err := h.plat.Click(ctxT(t), k, card.CardID, bridges.ChoiceAllow, u, u)
			if err != nil {
				t.Fatal(err)
			}
			if r := clicked.WaitReply(t, waitTimeout); !strings.Contains(r, "only @bob, approvers or admins") {
				t.Errorf("%s's click: reply %q", u, r)
			}
		}
		if d := sess.Decisions(); len(d) != 0 {
			t.Fatalf("the owner or an earlier author decided: %+v", d)
		}
		if _, err := h.plat.Click(ctxT(t), k, card.CardID, bridges.ChoiceAllow, "bob", "bob"); err != nil {
			t.Fatal(err)
		}
		if d := waitDecisions(t, sess, 1); !d[0].Allow {
			t.Errorf("bob's decision = %+v", d[0])
		}
	})
	t.Run("typed reply without buttons", func(t *testing.T) {
		lim := defaultLimits()
		lim.CanButtons = false
		h := start(t, setup{script: toolScript, access: teamAccess, limits: lim})
		k := key("T1")
		h.send(k, "m1", "alice", "hello")
		h.waitText(k, "pong: hello")
		h.send(k, "m2", "bob", "bash: make deploy")
		h.waitCard(k, "make deploy")
		h.send(k, "m3", "alice", "yes")
		h.waitText(k, "@alice, only @bob, approvers or admins can answer this request.")
		sess := h.session(1)
		if d := sess.Decisions(); len(d) != 0 {
			t.Fatalf("the owner's reply decided: %+v", d)
		}
		h.send(k, "m4", "carol", "yes") // an approver may
		if d := waitDecisions(t, sess, 1); !d[0].Allow {
			t.Errorf("approver's decision = %+v", d[0])
		}
	})
}

// TestTypedAnswerRefusedLikeAClick: while a question card is open, a reply
// from someone who may not decide it does not answer it (nor reach the
// agent); they are told who may.
func TestTypedAnswerRefusedLikeAClick(t *testing.T) {
	h := start(t, setup{script: toolScript, access: teamAccess})
	k := key("T1")
	h.send(k, "m1", "alice", "ask: Which database? | SQLite | Postgres")
	card := h.waitCard(k, "Which database?")
	h.send(k, "m2", "mallory", "2")
	h.waitText(k, "@mallory, only @alice, approvers or admins can answer this question")
	sess := h.session(1)
	if d := sess.Decisions(); len(d) != 0 {
		t.Fatalf("mallory's reply answered the question: %+v", d)
	}
	if n := len(sess.Sent()); n != 1 {
		t.Errorf("the refused reply reached the agent (%d messages sent)", n)
	}
	h.send(k, "m3", "alice", "2")
	h.waitText(k, `"answers":{"Which database?":"Postgres"}`)
	h.plat.WaitFor(t, k, waitTimeout, "answered card", func(m bridgetest.Msg) bool {
		return m.CardID == card.CardID && strings.Contains(m.Text, "Answered by @alice: Postgres")
	})
	h.waitLedgerFinal(k)
}

// TestPolicyDecisionsCounted: decisions made by policy rules are counted in
// agentbridge_approvals_total like people's decisions.
func TestPolicyDecisionsCounted(t *testing.T) {
	reg := prometheus.NewRegistry()
	h := start(t, setup{script: toolScript, metrics: metrics.New(reg), profile: func(a *profile.Agent) {
		a.Rules = []policy.Rule{
			{Tool: "Bash", Match: "rm -rf *", Action: policy.ActionDeny},
			{Tool: "Bash", Match: "git status *", Action: policy.ActionAllow},
		}
	}})
	k := key("T1")
	h.send(k, "m1", "alice", "bash: git status")
	h.waitText(k, `allowed {"command":"git status"`)
	h.send(k, "m2", "alice", "bash: rm -rf /tmp/x")
	h.waitText(k, "denied: Denied by the bridge's policy")
	h.send(k, "m3", "alice", "bash: git status --short")
	h.waitText(k, `allowed {"command":"git status --short"`)
	card := func() bridgetest.Msg { h.send(k, "m4", "alice", "bash: ls"); return h.waitCard(k, "ls") }()
	if _, err := h.plat.Click(ctxT(t), k, card.CardID, bridges.ChoiceAllow, "alice", "alice"); err != nil {
		t.Fatal(err)
	}
	h.waitText(k, `allowed {"command":"ls"`)
	got := approvalCounts(t, reg)
	if got["rule-allow"] != 2 || got["rule-deny"] != 1 || got["allow"] != 1 || len(got) != 3 {
		t.Errorf("agentbridge_approvals_total = %v, want rule-allow 2, rule-deny 1, allow 1", got)
	}
}
