package core_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/agentbridge/agentbridge/bridges/kits/bridgetest"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/store"
)

// TestCommandAuthority runs every command as every kind of user, with and
// without admins configured, and checks who is refused:
//
//   - !help, !cost, !status and !rules (listing): everyone allowed to talk;
//   - !stop and !new: the conversation's participants (who wrote in it
//     before, commands not counted) and admins;
//   - !model, !mode and !rules rm: admins only, and nobody when the bot
//     has no admins.
func TestCommandAuthority(t *testing.T) {
	type user struct {
		kind, id string
	}
	var (
		admin       = user{"admin", "dave"}
		approver    = user{"approver", "carol"}
		participant = user{"participant", "alice"}       // wrote "hello" in this conversation
		elsewhere   = user{"other conversation", "bob"}  // wrote only in another conversation
		commandOnly = user{"ran a command only", "erin"} // ran "!help" here and nothing else
	)
	users := []user{admin, approver, participant, elsewhere, commandOnly}
	cmds := []struct {
		text    string
		allowed string // what an allowed run answers
	}{
		{"!help", "**Commands**"},
		{"!cost", "💰 This conversation"},
		{"!status", "📊 Session"},
		{"!rules", "📜 **Policy rules**"},
		{"!stop", "Nothing to stop."},
		{"!new", "Started a fresh session"},
		{"!model claude-x", "Model set to `claude-x`"},
		{"!mode plan", "Mode set to `plan`"},
		{"!rules rm 1", "Removed grant #1"},
	}
	everyone := map[string]bool{"admin": true, "approver": true, "participant": true, "other conversation": true, "ran a command only": true}
	withAdmins := map[string]map[string]bool{
		"!help": everyone, "!cost": everyone, "!status": everyone, "!rules": everyone,
		"!stop":           {"admin": true, "participant": true},
		"!new":            {"admin": true, "participant": true},
		"!model claude-x": {"admin": true},
		"!mode plan":      {"admin": true},
		"!rules rm 1":     {"admin": true},
	}
	withoutAdmins := map[string]map[string]bool{
		"!help": everyone, "!cost": everyone, "!status": everyone, "!rules": everyone,
		"!stop": {"participant": true},
		"!new":  {"participant": true},
	}
	for _, cfg := range []struct {
		name   string
		access config.Access
		want   map[string]map[string]bool
		refuse map[string]string // refusal text per command class
	}{
		{"admins configured", config.Access{Approvers: []string{"carol"}, Admins: []string{"dave"}}, withAdmins,
			map[string]string{"admin": "is for admins only", "participants": "is for the people taking part in this conversation and admins"}},
		{"no admins", config.Access{Approvers: []string{"carol"}}, withoutAdmins,
			map[string]string{"admin": "Admins must be configured", "participants": "is for the people taking part in this conversation and admins"}},
	} {
		t.Run(cfg.name, func(t *testing.T) {
			for _, c := range cmds {
				for _, u := range users {
					t.Run(fmt.Sprintf("%s by %s", c.text, u.kind), func(t *testing.T) {
						h := start(t, setup{access: cfg.access})
						k := key("T1")
						h.send(k, "p1", participant.id, "hello")
						h.waitText(k, "pong: hello")
						h.send(key("T2"), "o1", elsewhere.id, "hi")
						h.waitText(key("T2"), "pong: hi")
						h.send(k, "p2", commandOnly.id, "!help")
						h.waitText(k, "**Commands**")
						conv := h.conversation(k)
						if _, err := h.st.AddGrants(ctxT(t), conv.ID, []store.Grant{{Tool: "Bash", Match: "make test", GrantedBy: "carol"}}); err != nil {
							t.Fatal(err)
						}
						before := len(h.plat.Messages(k))

						h.send(k, "cmd", u.id, c.text)
						got := h.plat.WaitFor(t, k, waitTimeout, "the answer to "+c.text, func(m bridgetest.Msg) bool {
							return strings.Contains(m.Text, c.allowed) && m.Ref.ID != "" && indexOf(h.plat.Messages(k), m) >= before ||
								strings.HasPrefix(m.Text, "⛔")
						})
						allowed := !strings.HasPrefix(got.Text, "⛔")
						if want := cfg.want[c.text][u.kind]; allowed != want {
							t.Fatalf("allowed = %v, want %v; answer %q", allowed, want, got.Text)
						}
						if allowed {
							return
						}
						class := "participants"
						if strings.HasPrefix(c.text, "!model") || strings.HasPrefix(c.text, "!mode") || c.text == "!rules rm 1" {
							class = "admin"
						}
						if !strings.Contains(got.Text, cfg.refuse[class]) {
							t.Errorf("refusal %q does not say %q", got.Text, cfg.refuse[class])
						}
						// A refused command changed nothing.
						after := h.conversation(k)
						if after.Model != "" || after.PermissionMode != "" || after.SessionID != conv.SessionID {
							t.Errorf("a refused %s changed the conversation: %+v", c.text, after)
						}
						if gs, _ := h.st.ActiveGrants(ctxT(t), conv.ID); len(gs) != 1 {
							t.Errorf("a refused %s removed a grant", c.text)
						}
						if calls := h.session(1).Calls(); len(calls) != 0 {
							t.Errorf("a refused %s reached the agent: %q", c.text, calls)
						}
					})
				}
			}
		})
	}
}

// indexOf returns the position of m among msgs (by reference), or -1.
func indexOf(msgs []bridgetest.Msg, m bridgetest.Msg) int {
	for i, x := range msgs {
		if x.Ref == m.Ref {
			return i
		}
	}
	return -1
}
