package core_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/config/profile"
	"github.com/agentbridge/agentbridge/store"
)

// TestCommandSpaceVariants runs every command with a tab, a no-break
// space, a zero-width space and a full-width space where a plain space (or
// nothing) belongs, as each kind of user (admin, approver, participant,
// allowed user): every variant is refused with the message saying why,
// nothing reaches the agent, and nothing changes — no mode, model, grant,
// schedule or session. The same commands with plain spaces run as before
// (TestCommandAuthority) and a plain "!rules rm 1" from a non-admin is
// refused.
func TestCommandSpaceVariants(t *testing.T) {
	cmds := []string{
		"!help", "!stop", "!new", "!model claude-x", "!mode acceptEdits", "!mode bypassPermissions", "!cost", "!status",
		"!rules", "!rules rm 1", `!schedule add "0 9 * * *" tz=UTC prompt`, "!schedule list", "!schedule rm 1",
		"!sessions", "!resume abcdef12",
	}
	variants := map[string]string{"tab": "\t", "nbsp": "\u00a0", "zwsp": "\u200b", "ideographic space": "\u3000"}
	roles := map[string]string{"admin": "dave", "approver": "carol", "participant": "alice", "allowed user": "bob"}
	for role, user := range roles {
		t.Run(role, func(t *testing.T) {
			h := start(t, setup{access: originAccess, profile: func(a *profile.Agent) { a.AllowBypass = true }})
			k := key("T1")
			h.send(k, "m0", "alice", "hello") // alice takes part; the others only run commands
			h.waitText(k, "pong: hello")
			conv := h.conversation(k)
			if _, err := h.st.AddGrants(ctxT(t), conv.ID, []store.Grant{{Tool: "Bash", Match: "ls *", GrantedBy: "dave"}}); err != nil {
				t.Fatal(err)
			}
			if _, err := h.st.AddSchedule(ctxT(t), store.Schedule{Source: store.ScheduleFromChat, Name: "daily", Key: store.ConversationKey(k),
				Cron: "0 9 * * *", TZ: "UTC", Prompt: "p", CreatedBy: "alice", ConversationID: conv.ID, LastFireAt: monday8}); err != nil {
				t.Fatal(err)
			}
			sent := 0
			for _, cmd := range cmds {
				for vname, v := range variants {
					text := withVariant(cmd, v)
					sent++
					h.send(k, fmt.Sprintf("v%d-%s", sent, vname), user, text)
				}
			}
			h.waitLedgerFinal(k)
			refusals := 0
			for _, m := range h.plat.Messages(k) {
				switch {
				case strings.HasPrefix(m.Text, "⛔ That command was not run: it contains a tab, a no-break space, a zero-width"):
					refusals++
				case strings.HasPrefix(m.Text, "pong: hello"):
				default:
					t.Errorf("unexpected answer: %q", m.Text)
				}
			}
			if refusals != sent {
				t.Errorf("%d refusals for %d variants", refusals, sent)
			}
			if got := h.session(1).Sent(); len(got) != 1 {
				t.Errorf("the agent got %d messages, want only hello", len(got))
			}
			after := h.conversation(k)
			if after.PermissionMode != "" || after.Model != "" || after.SessionID != conv.SessionID {
				t.Errorf("conversation changed: %+v", after)
			}
			if gs, err := h.st.ActiveGrants(context.Background(), conv.ID); err != nil || len(gs) != 1 {
				t.Errorf("grants = %+v, %v", gs, err)
			}
			if n := len(h.schedulesOf(k)); n != 1 {
				t.Errorf("%d schedules, want 1", n)
			}
			for _, c := range h.session(1).Calls() {
				if c == "interrupt" {
					t.Error("the agent was interrupted")
				}
			}
		})
	}

	t.Run("plain rules rm from a non-admin", func(t *testing.T) {
		h := start(t, setup{access: originAccess})
		k := key("T1")
		h.send(k, "m0", "alice", "hello")
		h.waitText(k, "pong: hello")
		conv := h.conversation(k)
		if _, err := h.st.AddGrants(ctxT(t), conv.ID, []store.Grant{{Tool: "Bash", Match: "ls *", GrantedBy: "dave"}}); err != nil {
			t.Fatal(err)
		}
		h.send(k, "m1", "alice", "!rules rm 1")
		h.waitText(k, "⛔ !rules rm is for admins only.")
		h.send(k, "m2", "dave", "!rules rm 1")
		h.waitText(k, "🗑 Removed grant #1")
	})
}

// withVariant puts v where cmd's first space is, or after the command
// name when it has no argument.
func withVariant(cmd, v string) string {
	if i := strings.IndexByte(cmd, ' '); i >= 0 {
		return cmd[:i] + v + cmd[i+1:]
	}
	return cmd + v
}

// TestCommandVariantPositions: an unusual character anywhere in a command
// line — before the prefix, inside the name, between arguments, at the
// end — refuses it; the same character in an ordinary message is passed
// to the agent untouched.
func TestCommandVariantPositions(t *testing.T) {
	h := start(t, setup{access: originAccess})
	k := key("T1")
	h.send(k, "m0", "dave", "hello")
	h.waitText(k, "pong: hello")
	lines := []string{"\u00a0!mode plan", "!mo\u200bde plan", "!mode plan\u200b", "!mode\u2003plan", "!mode\u2028plan", "\ufeff!mode plan",
		"!mode\u202eplan", "!MODE\tplan"}
	for i, l := range lines {
		h.send(k, fmt.Sprintf("p%d", i), "dave", l)
	}
	h.send(k, "mz", "dave", "tab\tand\u00a0nbsp in a message")
	h.waitText(k, "pong: tab\tand\u00a0nbsp in a message")
	h.waitLedgerFinal(k)
	refusals := 0
	for _, m := range h.plat.Messages(k) {
		if strings.HasPrefix(m.Text, "⛔ That command was not run") {
			refusals++
		}
	}
	if refusals != len(lines) {
		t.Errorf("%d refusals for %d lines:\n%s", refusals, len(lines), h.plat.Dump())
	}
	if mode := h.conversation(k).PermissionMode; mode != "" {
		t.Errorf("mode = %q", mode)
	}
	if !utf8.ValidString(h.session(1).Sent()[1].Text) {
		t.Error("the message was mangled")
	}
	_ = bridges.CommandPrefix
}
