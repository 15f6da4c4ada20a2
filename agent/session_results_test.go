package agent

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentbridge/agentbridge/agent/agenttest"
	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/internal/testkit"
)

// TestSessionResultGapAndUndecodableControlRequest: a gap in the results'
// result_index is reported as ResultsLost just before the result that
// shows it (once: the numbering goes on from there), and a control
// request the session cannot decode is still answered, with an error, so
// the CLI never waits on it.
func TestSessionResultGapAndUndecodableControlRequest(t *testing.T) {
	out := filepath.Join(t.TempDir(), "stdin.jsonl")
	cli := testkit.FakeCLI(t, `
echo '{"type":"control_request","request_id":"bad-1","request":{"subtype":"can_use_tool","tool_name":7,"input":{}}}'
echo '{"type":"result","subtype":"success","result":"one","result_index":0,"user_message_uuids":["u1"]}'
echo '{"type":"result","subtype":"success","result":"three","result_index":2}'
echo '{"type":"result","subtype":"success","result":"four","result_index":3}'
echo '{"type":"result","subtype":"success","result":"unnumbered"}'
head -n 1 > "$OUT"
`)
	s, err := Start(context.Background(), Options{Command: cli, Workdir: t.TempDir(), Home: t.TempDir(),
		Env: map[string]string{"OUT": out}}, testkit.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	rec := agenttest.Record(t, s)
	t.Cleanup(func() { _ = s.Close(context.Background()) })
	agenttest.NextExit(t, rec)
	rec.WaitClosed(t)

	var seq []string
	for _, ev := range rec.All() {
		switch e := ev.(type) {
		case streamjson.Result:
			seq = append(seq, e.Text)
		case streamjson.ResultsLost:
			seq = append(seq, "lost "+strings.Repeat("#", e.Count)+" from "+string(rune('0'+e.First)))
		}
	}
	if got, want := strings.Join(seq, ", "), "one, lost # from 1, three, four, unnumbered"; got != want {
		t.Errorf("results %q, want %q", got, want)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(data)); !strings.Contains(got, `"subtype":"error","request_id":"bad-1"`) ||
		!strings.Contains(got, "undecodable control request") {
		t.Errorf("the undecodable control request was answered %q", got)
	}
}

// TestResultFinishesTheMessagesItNames: a result finishes the messages it
// lists in user_message_uuids, also one whose "started" receipt never came
// (folded into the turn while queued), so the session is not left busy.
func TestResultFinishesTheMessagesItNames(t *testing.T) {
	st := newTurnState()
	st.sent("u1")
	st.sent("u2")
	st.sent("u3")
	st.observe(streamjson.Lifecycle{UUID: "u1", State: streamjson.LifecycleStarted})
	st.observe(streamjson.Lifecycle{UUID: "u2", State: streamjson.LifecycleQueued})
	st.observe(streamjson.Lifecycle{UUID: "u3", State: streamjson.LifecycleQueued})
	st.observe(streamjson.Init{})
	st.observe(streamjson.Result{Text: "pong: u1 u2", UserMessageUUIDs: []string{"u1", "u2"}})
	if _, ok := st.msgs["u2"]; ok {
		t.Error("u2, named by the result, is still pending")
	}
	if _, ok := st.msgs["u3"]; !ok || !st.busy() {
		t.Error("u3, queued and not named, is no longer pending")
	}
}
