package core_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/internal/testkit"
)

// observed records what a worker.Observer is shown.
type observed struct {
	mu     sync.Mutex
	events []streamjson.Event
	shown  []bridges.Message
	sent   []string // "msgID from: text"
	keys   map[bridges.ConversationKey]bool
}

func (o *observed) Sent(k bridges.ConversationKey, msgID, from, text string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.sent = append(o.sent, msgID+" "+from+": "+text)
	o.keys[k] = true
}

func (o *observed) AgentEvent(k bridges.ConversationKey, ev streamjson.Event) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.events = append(o.events, ev)
	o.keys[k] = true
}

func (o *observed) Shown(k bridges.ConversationKey, m bridges.Message) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.shown = append(o.shown, m)
	o.keys[k] = true
}

func (o *observed) has(pred func(events []streamjson.Event, shown []bridges.Message) bool) func() bool {
	return func() bool {
		o.mu.Lock()
		defer o.mu.Unlock()
		return pred(o.events, o.shown)
	}
}

// TestObserverSeesTheConversation: the Observer (bridge attach's hub) is
// shown each message handed to the agent, the agent's events, each card
// when it opens (with its buttons) and when it is decided (without), and
// the conversation's notices, all under the conversation's key; a
// command is not a message to the agent.
func TestObserverSeesTheConversation(t *testing.T) {
	o := &observed{keys: map[bridges.ConversationKey]bool{}}
	h := start(t, setup{script: toolScript, access: teamAccess, observer: o})
	k := key("T1")
	h.send(k, "m1", "alice", "bash: git status")
	card := h.waitCard(k, "git status")
	testkit.WaitUntil(t, "the open card", waitTimeout, o.has(func(_ []streamjson.Event, shown []bridges.Message) bool {
		for _, m := range shown {
			if m.CardID == card.CardID && len(m.Buttons) == len(card.Buttons) && strings.Contains(m.Text, "git status") {
				return true
			}
		}
		return false
	}))
	if _, err := h.plat.Click(ctxT(t), k, card.CardID, bridges.ChoiceAllow, "alice", "alice"); err != nil {
		t.Fatal(err)
	}
	testkit.WaitUntil(t, "the decided card", waitTimeout, o.has(func(_ []streamjson.Event, shown []bridges.Message) bool {
		for _, m := range shown {
			if m.CardID == card.CardID && len(m.Buttons) == 0 && strings.Contains(m.Text, "Allowed by @alice") {
				return true
			}
		}
		return false
	}))
	testkit.WaitUntil(t, "the tool call and the result", waitTimeout, o.has(func(events []streamjson.Event, _ []bridges.Message) bool {
		var tool, result bool
		for _, ev := range events {
			switch e := ev.(type) {
			case streamjson.ToolUse:
				tool = tool || e.Name == "Bash"
			case streamjson.Result:
				result = true
			}
		}
		return tool && result
	}))
	h.send(k, "m2", "alice", "!status")
	testkit.WaitUntil(t, "the !status notice", waitTimeout, o.has(func(_ []streamjson.Event, shown []bridges.Message) bool {
		for _, m := range shown {
			if m.CardID == "" && strings.Contains(m.Text, "Session") {
				return true
			}
		}
		return false
	}))
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.sent) != 1 || o.sent[0] != "m1 alice: bash: git status" {
		t.Errorf("sent = %q, want alice's one message", o.sent)
	}
	if len(o.keys) != 1 || !o.keys[k] {
		t.Errorf("observed keys %v, want only %v", o.keys, k)
	}
}

// TestHandoffCommandIsPrivate: !handoff answers its author privately with
// the conversation's id in the commands to run, and is refused to someone
// who does not take part in the conversation.
func TestHandoffCommandIsPrivate(t *testing.T) {
	h := start(t, setup{access: teamAccess})
	k := key("T1")
	h.send(k, "m1", "alice", "hello")
	h.waitText(k, "pong")
	conv := h.conversation(k)
	h.send(k, "m2", "alice", "!handoff")
	testkit.WaitUntil(t, "the private answer", waitTimeout, func() bool {
		for _, p := range h.plat.Privates() {
			if p.User == "alice" && p.Key == k && strings.Contains(p.Text, "bridge attach "+conv.ID) &&
				strings.Contains(p.Text, "bridge export "+conv.ID+" -dir DIR") {
				return true
			}
		}
		return false
	})
	h.send(k, "m3", "bob", "!handoff")
	h.waitText(k, "!handoff is for the people taking part in this conversation")
	for _, m := range h.plat.Messages(k) {
		if strings.Contains(m.Text, "bridge attach") {
			t.Errorf("!handoff answered in the conversation: %q", m.Text)
		}
	}
}
