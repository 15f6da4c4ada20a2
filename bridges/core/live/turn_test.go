package live

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/bridges/core/render"
)

func TestTurnFinal(t *testing.T) {
	tr := NewTurn(time.Time{})
	tr.AddDelta("Let me ")
	tr.AddDelta("check.")
	tr.AddText("Let me check.")
	tr.AddTool(streamjson.ToolUse{ID: "1", Name: "Bash"}, "› `Bash: ls`")
	tr.AddDelta("Done: 3 files.")
	activity, answer := tr.Final("Done: 3 files.")
	if answer != "Done: 3 files." || render.Join(activity) != "Let me check.\n\n› `Bash: ls`" {
		t.Errorf("final = %q / %q", render.Join(activity), answer)
	}
	_, answer = tr.Final("")
	if answer != "Done: 3 files." {
		t.Errorf("empty result text should fall back to the last block: %q", answer)
	}
}

// TestTurnActivityBounded: a turn that streams far more than
// MaxActivity keeps at most that much, drops its oldest lines first,
// keeps the tool-line index right, and counts what it dropped.
func TestTurnActivityBounded(t *testing.T) {
	tr := NewTurn(time.Time{})
	var last string
	total := 0
	for i := 0; total < 4*MaxActivity; i++ {
		id := fmt.Sprint("tool", i)
		line := fmt.Sprintf("› `Bash: step %d %s`", i, strings.Repeat("x", 200))
		tr.AddTool(streamjson.ToolUse{ID: id, Name: "Bash"}, line)
		tr.AddToolResult(streamjson.ToolResult{ToolUseID: id, Content: "ok"})
		tr.AddDelta(fmt.Sprintf("thinking about step %d. ", i))
		tr.AddDelta(strings.Repeat("y", 500))
		tr.AddText("(ignored: streamed)")
		total += len(line) + 520
		last = line
		if size := activityBytes(tr); size > MaxActivity {
			t.Fatalf("step %d: activity holds %d bytes, limit %d", i, size, MaxActivity)
		}
	}
	if tr.TrimmedSegs == 0 {
		t.Fatal("nothing was trimmed")
	}
	if size := activityBytes(tr); size < MaxActivity/2-1024 {
		t.Errorf("trimmed too much: %d bytes left", size)
	}
	// The newest activity is intact, and the index still finds tool lines.
	n := len(tr.Segs)
	if !strings.HasPrefix(tr.Segs[n-2].Text, last) || !strings.HasSuffix(tr.Segs[n-1].Text, strings.Repeat("y", 500)) {
		t.Errorf("newest segments changed: %q / %q", tr.Segs[n-2].Text[:40], tr.Segs[n-1].Text[:40])
	}
	for id, i := range tr.ToolSeg {
		if i < 0 || i >= n || tr.Segs[i].Kind != render.SegTool || !strings.Contains(tr.Segs[i].Text, "step "+strings.TrimPrefix(id, "tool")+" ") {
			t.Fatalf("toolSeg[%s] = %d does not point at its line", id, i)
		}
	}
	// A card resets the activity under the size estimate: the next trim
	// recomputes it instead of dropping what is left.
	tr.Segs, tr.ToolSeg = nil, map[string]int{}
	tr.AddNote("after the card")
	if len(tr.Segs) != 1 {
		t.Errorf("after a reset: %d segments, want the note", len(tr.Segs))
	}
}

func activityBytes(t *Turn) int {
	n := 0
	for _, s := range t.Segs {
		n += len(s.Text)
	}
	return n
}

// TestTurnToolsBounded: a turn remembers its last MaxTools tool calls.
func TestTurnToolsBounded(t *testing.T) {
	tr := NewTurn(time.Time{})
	const calls = MaxTools + 100
	for i := range calls {
		tr.AddTool(streamjson.ToolUse{ID: fmt.Sprint("t", i), Name: "ExitPlanMode"}, "")
		tr.AddTool(streamjson.ToolUse{ID: fmt.Sprint("t", i), Name: "ExitPlanMode"}, "") // repeated id: no double count
	}
	if len(tr.Tools) != MaxTools || len(tr.toolOrder) != MaxTools || tr.ForgotTools != calls-MaxTools {
		t.Fatalf("tools %d, order %d, forgotten %d; want %d, %d, %d",
			len(tr.Tools), len(tr.toolOrder), tr.ForgotTools, MaxTools, MaxTools, calls-MaxTools)
	}
	if _, ok := tr.Tools[fmt.Sprint("t", calls-1)]; !ok {
		t.Error("newest tool call forgotten")
	}
	if _, ok := tr.Tools["t0"]; ok {
		t.Error("oldest tool call remembered")
	}
}
