package core_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core/metrics"
	"github.com/agentbridge/agentbridge/bridges/kits/bridgetest"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/internal/testkit"
	"github.com/agentbridge/agentbridge/store"
)

// TestStrangersToldPrivatelyOncePerHour: a user who may not talk to the bot
// never reaches the agent, gets nothing public and starts no conversation.
// Where the platform can tell one user privately they are told once an
// hour per bot, however many messages and conversations; elsewhere nothing
// is said. Refusals and notices are counted.
func TestStrangersToldPrivatelyOncePerHour(t *testing.T) {
	tests := []struct {
		name    string
		silent  bool // the platform has no Ephemeral ability
		notices int  // private notices expected in all
		how     string
	}{
		{"platform with private notices", false, 3, "ephemeral"},
		{"platform without private notices", true, 0, "none"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := bridgetest.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
			reg := prometheus.NewRegistry()
			h := start(t, setup{clock: clock, access: config.Access{Users: []string{"alice"}},
				metrics: metrics.New(reg), silent: tt.silent})
			channel := bridges.ConversationKey{Bot: "bot", Channel: "C1"}

			h.send(key("T1"), "m1", "mallory", "hello?")
			h.send(key("T1"), "m2", "mallory", "anyone?")
			h.send(key("T2"), "m3", "mallory", "in another thread")
			h.send(channel, "m4", "mallory", "top level")
			h.send(key("T1"), "e1", "eve", "me too")
			clock.Advance(59 * time.Minute)
			h.send(key("T2"), "m5", "mallory", "still here")
			clock.Advance(time.Minute)
			h.send(key("T2"), "m6", "mallory", "an hour later")

			if ms := h.plat.Messages(bridges.ConversationKey{}); len(ms) != 0 {
				t.Errorf("strangers got public messages:\n%s", h.plat.Dump())
			}
			if n := len(h.pool.Acquisitions()); n != 0 {
				t.Errorf("strangers started %d agents", n)
			}
			for _, k := range []bridges.ConversationKey{key("T1"), key("T2"), channel} {
				if _, err := h.st.GetConversation(ctxT(t), store.ConversationKey(k)); !errors.Is(err, store.ErrNotFound) {
					t.Errorf("conversation %s exists after strangers only (err %v)", k, err)
				}
			}
			ps := h.plat.Privates()
			if len(ps) != tt.notices {
				t.Fatalf("private notices = %+v, want %d", ps, tt.notices)
			}
			if tt.notices > 0 {
				want := []struct {
					user string
					key  bridges.ConversationKey
				}{{"mallory", key("T1")}, {"eve", key("T1")}, {"mallory", key("T2")}}
				for i, w := range want {
					if ps[i].User != w.user || ps[i].Key != w.key {
						t.Errorf("notice %d to %s in %s, want %s in %s", i, ps[i].User, ps[i].Key, w.user, w.key)
					}
					if text := ps[i].Text; text == "" || len(text) > 100 || strings.ContainsAny(text, "@#") ||
						strings.Contains(text, "alice") || strings.Contains(text, "coder") {
						t.Errorf("notice %q is not short, or reveals something", text)
					}
				}
			}
			if got := testkit.CounterValue(t, reg, "agentbridge_messages_total", map[string]string{"outcome": "refused"}); got != 7 {
				t.Errorf("refused messages counted %v, want 7", got)
			}
			if got := testkit.CounterValue(t, reg, "agentbridge_stranger_notices_total", map[string]string{"how": tt.how}); got != 3 {
				t.Errorf("stranger notices (how=%s) counted %v, want 3", tt.how, got)
			}
		})
	}
}

// TestStrangerClickStillAnsweredPrivately: the hourly limit on notices
// does not silence the answer to a stranger's click on a card, which stays
// private and decides nothing.
func TestStrangerClickStillAnsweredPrivately(t *testing.T) {
	h := start(t, setup{script: toolScript, access: config.Access{Users: []string{"alice"}}})
	k := key("T1")
	h.send(k, "m1", "alice", "bash: git push origin main")
	card := h.waitCard(k, "git push origin main")
	h.send(k, "m2", "mallory", "let me approve that")
	for i := range 2 {
		clicked, err := h.plat.Click(ctxT(t), k, card.CardID, bridges.ChoiceAllow, "mallory", "mallory")
		if err != nil {
			t.Fatal(err)
		}
		if r := clicked.WaitReply(t, waitTimeout); !strings.Contains(r, "only @alice") {
			t.Fatalf("click %d: stranger got reply %q", i+1, r)
		}
	}
	if d := h.session(1).Decisions(); len(d) != 0 {
		t.Fatalf("a stranger's click decided: %+v", d)
	}
	if ps := h.plat.Privates(); len(ps) != 1 || ps[0].User != "mallory" {
		t.Errorf("private notices = %+v, want one to mallory", ps)
	}
	for _, m := range h.plat.Messages(k) {
		if strings.Contains(m.Text, "mallory") || strings.Contains(m.Text, "access") {
			t.Errorf("public message about the stranger: %q", m.Text)
		}
	}
}

// TestAllowed: Handler.Allowed applies the access rules HandleMessage
// applies, so that adapters can ask before any side effect.
func TestAllowed(t *testing.T) {
	h := start(t, setup{access: config.Access{Channels: []string{"C1"}, Users: []string{"alice"},
		Approvers: []string{"carol"}, Admins: []string{"dave"}}})
	tests := []struct {
		name string
		key  bridges.ConversationKey
		user string
		want bool
	}{
		{"listed user", key(""), "alice", true},
		{"listed user in a thread", key("T1"), "alice", true},
		{"approver", key(""), "carol", true},
		{"admin", key(""), "dave", true},
		{"stranger", key(""), "mallory", false},
		{"empty user", key(""), "", false},
		{"listed user in another channel", bridges.ConversationKey{Bot: "bot", Channel: "C2"}, "alice", false},
		{"admin in another channel", bridges.ConversationKey{Bot: "bot", Channel: "C2"}, "dave", false},
		{"unknown bot", bridges.ConversationKey{Bot: "nope", Channel: "C1"}, "alice", false},
	}
	hd, err := h.plat.Handler(ctxT(t)) // as the adapter sees the core
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := hd.Allowed(tt.key, tt.user); got != tt.want {
				t.Errorf("Allowed(%s, %q) = %v, want %v", tt.key, tt.user, got, tt.want)
			}
		})
	}
	open, err := start(t, setup{}).plat.Handler(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	if !open.Allowed(key(""), "anyone") {
		t.Error("a bot without access lists refuses someone")
	}
}
