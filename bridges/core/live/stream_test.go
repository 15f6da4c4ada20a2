package live

import (
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/bridges"
)

// TestToolDoneBeforeStreamOpens: a tool that ends before the turn's stream
// opens (the first edit interval) is shown in its final state once it
// does, not as running for good.
func TestToolDoneBeforeStreamOpens(t *testing.T) {
	tr := NewTurn(time.Time{})
	tr.AddTool(streamjson.ToolUse{ID: "ok", Name: "Read"}, "› `Read: notes.txt`")
	tr.AddTool(streamjson.ToolUse{ID: "bad", Name: "Read"}, "› `Read: missing.txt`")
	tr.AddTool(streamjson.ToolUse{ID: "run", Name: "Bash"}, "› `Bash: make`")
	if tr.Live.ToolDone(streamjson.ToolResult{ToolUseID: "ok", Content: "hello"}, false) {
		t.Errorf("no stream yet, but ToolDone reported something to show")
	}
	tr.Live.ToolDone(streamjson.ToolResult{ToolUseID: "bad", Content: "no such file", IsError: true}, false)

	chunks, _ := tr.StreamChunks(10000) // what the stream opens with
	got := map[string]string{}
	for _, c := range chunks {
		if c.Task != nil {
			got[c.Task.ID] = c.Task.Status
		}
	}
	want := map[string]string{"ok": bridges.TaskComplete, "bad": bridges.TaskFailed, "run": bridges.TaskRunning}
	for id, st := range want {
		if got[id] != st {
			t.Errorf("task %s = %q, want %q (all %v)", id, got[id], st, got)
		}
	}
}
