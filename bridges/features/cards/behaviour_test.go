package cards_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/features/cards"
	"github.com/agentbridge/agentbridge/config/profile"
	"github.com/agentbridge/agentbridge/store"
)

// recHost is host keeping every answer to the CLI whole, the timers it
// was asked to arm and stop, and the profile's approval timeout.
type recHost struct {
	*host
	timeout   time.Duration
	decisions map[string]streamjson.Decision
	timers    []string // "start id d" and "stop id"
}

func newRecHost(t *testing.T) *recHost {
	return &recHost{host: newHost(t), decisions: map[string]streamjson.Decision{}}
}

func (h *recHost) Profile() *profile.Agent {
	return &profile.Agent{Name: "default", ApprovalTimeout: h.timeout}
}
func (h *recHost) Respond(_ context.Context, id string, d streamjson.Decision) error {
	h.decisions[id] = d
	return nil
}
func (h *recHost) StartTimer(d time.Duration, id string) {
	h.timers = append(h.timers, "start "+id+" "+d.String())
}
func (h *recHost) StopTimer(id string) { h.timers = append(h.timers, "stop "+id) }

func (h *recHost) ask(ctx context.Context, s *cards.Set, id, cmd string, suggestions ...json.RawMessage) {
	s.OnPermission(ctx, streamjson.PermissionRequest{RequestID: id, ToolName: "Bash", ToolUseID: "tu-" + id,
		Input: json.RawMessage(`{"command":"` + cmd + `"}`), Suggestions: suggestions})
}

func (h *recHost) approval(t *testing.T, id string) store.Approval {
	t.Helper()
	a, err := h.st.GetApproval(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestWhoMayDecideEveryChoice: for each choice of a permission card, the
// turn's requester and an approver decide it (recorded as theirs), while
// a stranger's click is refused privately, leaves the card open and
// answers nothing.
func TestWhoMayDecideEveryChoice(t *testing.T) {
	ctx := context.Background()
	for _, choice := range []string{bridges.ChoiceAllow, bridges.ChoiceDeny} {
		for _, tc := range []struct {
			user string
			may  bool
		}{{"alice", true}, {"carol", true}, {"mallory", false}, {"", false}, {"ALICE", false}} {
			h := newRecHost(t)
			s := cards.New(h)
			h.ask(ctx, s, "r1", "touch a")
			s.OnAction(ctx, bridges.Action{CardID: "r1", Choice: choice, UserID: tc.user, UserName: tc.user})
			d, answered := h.decisions["r1"]
			a := h.approval(t, "r1")
			if !tc.may {
				if answered || s.Len() != 1 || len(h.private) != 1 || !a.Open() ||
					!strings.Contains(h.private[0], "only @alice") {
					t.Errorf("%s by %q: answered %v, %d open, private %q, approval %+v; want refused", choice, tc.user, answered, s.Len(), h.private, a)
				}
				continue
			}
			if !answered || d.Allow != (choice == bridges.ChoiceAllow) || s.Len() != 0 || a.DecidedBy != tc.user {
				t.Errorf("%s by %s: answer %+v (%v), %d open, approval %+v", choice, tc.user, d, answered, s.Len(), a)
			}
		}
	}
}

// TestAnswerShape: what the CLI gets for each choice — allow with the
// request's own input, deny with who denied, always with the session-only
// permissions and the grant stored under the decider — and a choice the
// card does not offer answers nothing.
func TestAnswerShape(t *testing.T) {
	ctx := context.Background()
	sugg := json.RawMessage(`{"type":"addRules","rules":[{"toolName":"Bash","ruleContent":"make:*"}],"behavior":"allow","destination":"localSettings"}`)
	h := newRecHost(t)
	s := cards.New(h)
	h.ask(ctx, s, "allow", "make a")
	h.ask(ctx, s, "deny", "make b")
	h.ask(ctx, s, "always", "make c", sugg)
	h.ask(ctx, s, "odd", "make d")

	s.OnAction(ctx, bridges.Action{CardID: "odd", Choice: bridges.ChoiceApprove, UserID: "alice"})
	s.OnAction(ctx, bridges.Action{CardID: "odd", Choice: bridges.ChoiceAlways, UserID: "alice"}) // no suggestion: not offered
	if _, ok := h.decisions["odd"]; ok || len(h.private) != 2 || !strings.Contains(h.private[0], "not available") {
		t.Fatalf("choices the card does not offer: answers %v, private %q", h.decisions, h.private)
	}
	s.OnAction(ctx, bridges.Action{CardID: "allow", Choice: bridges.ChoiceAllow, UserID: "alice", UserName: "alice"})
	s.OnAction(ctx, bridges.Action{CardID: "deny", Choice: bridges.ChoiceDeny, UserID: "carol", UserName: "carol"})
	s.OnAction(ctx, bridges.Action{CardID: "always", Choice: bridges.ChoiceAlways, UserID: "carol", UserName: "carol"})

	if d := h.decisions["allow"]; !d.Allow || string(d.UpdatedInput) != `{"command":"make a"}` || len(d.UpdatedPermissions) != 0 {
		t.Errorf("allow: %+v, want allowed with its own input and no permissions", d)
	}
	if d := h.decisions["deny"]; d.Allow || !strings.Contains(d.Message, "Denied by") || !strings.Contains(d.Message, "carol") {
		t.Errorf("deny: %+v, want denied, saying by whom", d)
	}
	d := h.decisions["always"]
	if !d.Allow || string(d.UpdatedInput) != `{"command":"make c"}` || len(d.UpdatedPermissions) != 1 {
		t.Fatalf("always: %+v", d)
	}
	var perm map[string]any
	if json.Unmarshal(d.UpdatedPermissions[0], &perm) != nil || perm["destination"] != "session" {
		t.Errorf("always: permission %s, want it for the session only", d.UpdatedPermissions[0])
	}
	gs, err := h.st.ActiveGrants(ctx, h.conv.ID)
	if err != nil || len(gs) != 1 || gs[0].Match != "make *" || gs[0].GrantedBy != "carol" || gs[0].ApprovalID != "always" {
		t.Errorf("grants %+v, %v; want make * granted by carol on the card", gs, err)
	}
	for id, want := range map[string]store.Decision{"allow": store.DecisionAllow, "deny": store.DecisionDeny, "always": store.DecisionAlways} {
		if a := h.approval(t, id); a.Decision != want {
			t.Errorf("approval %s: %+v, want %s", id, a, want)
		}
	}
	if s.Len() != 1 {
		t.Errorf("%d cards open, want only the one never decided", s.Len())
	}
}

// TestExpiry: a card's timeout is armed when it shows, for the profile's
// approval_timeout; when it fires the CLI is denied (told not to retry),
// the card is closed and recorded as timed out, and a late click is told
// it is no longer open; a card decided in time has its timer stopped.
// Closing every card (the process gone) answers nothing and records them
// expired.
func TestExpiry(t *testing.T) {
	ctx := context.Background()
	h := newRecHost(t)
	h.timeout = 2 * time.Minute
	s := cards.New(h)
	h.ask(ctx, s, "slow", "touch a")
	h.ask(ctx, s, "quick", "touch b")
	h.ask(ctx, s, "left1", "touch c")
	h.ask(ctx, s, "left2", "touch d")
	if want := []string{"start slow 2m0s", "start quick 2m0s", "start left1 2m0s", "start left2 2m0s"}; !slices.Equal(h.timers, want) {
		t.Fatalf("timers %q, want %q", h.timers, want)
	}
	h.timers = nil
	s.OnAction(ctx, bridges.Action{CardID: "quick", Choice: bridges.ChoiceAllow, UserID: "alice"})
	s.Expire(ctx, "slow")
	s.Expire(ctx, "slow")   // fired twice: nothing more
	s.Expire(ctx, "nobody") // unknown
	if !slices.Equal(h.timers, []string{"stop quick", "stop slow"}) {
		t.Errorf("timers %q, want the decided and the expired card's stopped", h.timers)
	}
	d, ok := h.decisions["slow"]
	if !ok || d.Allow || !strings.Contains(d.Message, "within 2m ") || !strings.Contains(d.Message, "Do not retry") {
		t.Errorf("expired: answer %+v (%v), want denied, saying the timeout", d, ok)
	}
	if a := h.approval(t, "slow"); a.Decision != store.DecisionTimeout || a.Open() {
		t.Errorf("expired: approval %+v, want timeout", a)
	}
	s.OnAction(ctx, bridges.Action{CardID: "slow", Choice: bridges.ChoiceAllow, UserID: "alice"})
	if len(h.private) != 1 || h.private[0] != "This request is no longer open." || h.decisions["slow"].Allow {
		t.Errorf("late click: private %q, answer %+v", h.private, h.decisions["slow"])
	}
	s.ExpireAll(ctx, "⏹ The agent stopped.")
	if s.Len() != 0 {
		t.Fatalf("%d cards open after ExpireAll", s.Len())
	}
	for _, id := range []string{"left1", "left2"} {
		if _, ok := h.decisions[id]; ok {
			t.Errorf("%s answered on ExpireAll (the process is gone)", id)
		}
		if a := h.approval(t, id); a.Decision != store.DecisionExpired {
			t.Errorf("%s: approval %+v, want expired", id, a)
		}
	}
}
