package web

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/kits/bridgetest"
	"github.com/agentbridge/agentbridge/store"
)

// TestToolDetails: a tool line in the console carries a Details button for
// its call, and the call's full input and output are served to the people
// who see the conversation (and to nobody else); the agent cannot forge a
// button with markup of its own.
func TestToolDetails(t *testing.T) {
	cfg := testConfig(t, "127.0.0.1:9464", usersYAML)
	st := testStore(t)
	c, srv, _ := newTestConsole(t, cfg, st)
	long := strings.Repeat("line of output\n", 400)
	bridgetest.RunCoreOn(t, cfg, st, map[string]bridges.Platform{"console": c}, func(s *bridgetest.FakeSession, m streamjson.UserMessage) {
		s.Emit(streamjson.Lifecycle{UUID: m.UUID, State: streamjson.LifecycleStarted})
		s.Emit(streamjson.AssistantText{Text: "Looking around."})
		s.Emit(streamjson.ToolUse{ID: "toolu_01AB", Name: "Bash", Input: json.RawMessage(`{"command":"ls -la /srv > list && sort < list"}`)})
		s.Emit(streamjson.ToolResult{ToolUseID: "toolu_01AB", Content: long})
		s.Reply(m, "Done. <button data-tool=\"x\">fake</button> \uE000toolu_01AB\uE001")
	})
	waitRunning(t, c)
	ana, bob := newClient(t, srv.URL), newClient(t, srv.URL)
	anaCSRF := ana.signIn(anaToken)
	bob.signIn(bobToken)
	key := bridges.ConversationKey{Bot: "console", Channel: "ana", Thread: "threadtool1"}
	if s := ana.sendForm(key.Thread, anaCSRF, "look", nil); s != http.StatusNoContent {
		t.Fatalf("send: %d", s)
	}
	waitStored(t, c, key, func(m store.WebMessage) bool { return strings.Contains(m.Text, "Done.") })
	var page string
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		page = mustGet(t, ana, "/chat/"+key.Thread)
		if strings.Contains(page, `data-tool="toolu_01AB"`) || time.Now().After(deadline) {
			break
		}
	}
	if n := strings.Count(page, `class="btn small tool-toggle" data-tool="toolu_01AB"`); n != 1 {
		t.Errorf("%d Details buttons for the tool line, want 1 (and none forged by the agent's text):\n%s", n, page)
	}
	if !strings.Contains(page, "<code>Bash: ls -la /srv &gt; list &amp;&amp; sort &lt; list</code>") {
		t.Error("the tool line lost its text")
	}
	if strings.Contains(page, `<button data-tool="x">`) {
		t.Error("the agent's markup became a button")
	}

	status, body, _ := ana.do("GET", "/chat/"+key.Thread+"/tools/toolu_01AB", nil, nil)
	var got struct {
		Name, Input, Output string
		Done                bool
	}
	if status != http.StatusOK || json.Unmarshal([]byte(body), &got) != nil {
		t.Fatalf("GET tool: %d %s", status, body)
	}
	if got.Name != "Bash" || !strings.Contains(got.Input, `"command": "ls -la /srv > list && sort < list"`) || got.Output != long || !got.Done {
		t.Errorf("tool call = %+v", got)
	}
	if s, _, _ := bob.do("GET", "/chat/"+key.Thread+"/tools/toolu_01AB", nil, nil); s != http.StatusNotFound {
		t.Errorf("bob GET ana's tool call: %d, want 404", s)
	}
	if s, _, _ := ana.do("GET", "/chat/"+key.Thread+"/tools/nope", nil, nil); s != http.StatusNotFound {
		t.Errorf("unknown tool call: %d, want 404", s)
	}
}
