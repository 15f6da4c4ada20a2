package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/agent/fakemodel"
	"github.com/agentbridge/agentbridge/bridges/adapters/slack/slackfake"
	"github.com/agentbridge/agentbridge/internal/testkit"
)

// planTodos are the tasks planTurn creates.
var planTodos = []string{"Read the notes", "Check the missing file", "Make a file"}

// planTurn returns a fake model that answers one prompt with a plan and
// three tool calls, one step per request: TaskCreate for each of
// planTodos; TaskUpdate 1 in progress; Read notes.txt (in dir); Read
// missing.txt (fails); Bash "touch made.txt" (asks for a card); TaskUpdate
// of all three completed; then a slowly streamed answer. (The CLI cancels
// a failed call's siblings, hence one call per step.)
func planTurn(dir *atomic.Pointer[string]) fakemodel.Planner {
	return func(req fakemodel.Request, newToolID func() string) fakemodel.Reply {
		return planReply(req, newToolID, *dir.Load())
	}
}

func planReply(req fakemodel.Request, newToolID func() string, dir string) fakemodel.Reply {
	use := func(name string, input map[string]any) fakemodel.ReplyBlock {
		return fakemodel.ReplyBlock{Type: "tool_use", ID: newToolID(), Name: name, Input: input}
	}
	calls := func(blocks ...fakemodel.ReplyBlock) fakemodel.Reply {
		return fakemodel.Reply{Blocks: blocks, StopReason: "tool_use"}
	}
	answered := fakemodel.AnsweredTools(req)
	last := ""
	if len(answered) > 0 {
		last = answered[len(answered)-1].Use.Name + " " + string(answered[len(answered)-1].Use.Input)
	}
	switch {
	case len(answered) == 0:
		var creates []fakemodel.ReplyBlock
		for _, s := range planTodos {
			creates = append(creates, use("TaskCreate", map[string]any{"subject": s, "description": s}))
		}
		return calls(creates...)
	case strings.HasPrefix(last, "TaskCreate"):
		return calls(use("TaskUpdate", map[string]any{"taskId": "1", "status": "in_progress"}))
	case strings.HasPrefix(last, "TaskUpdate") && strings.Contains(last, "in_progress"):
		return calls(use("Read", map[string]any{"file_path": filepath.Join(dir, "notes.txt")}))
	case strings.Contains(last, "notes.txt"):
		return calls(use("Read", map[string]any{"file_path": filepath.Join(dir, "missing.txt")}))
	case strings.Contains(last, "missing.txt"):
		return calls(use("Bash", map[string]any{"command": "touch made.txt", "description": "make a file"}))
	case strings.HasPrefix(last, "Bash"):
		var updates []fakemodel.ReplyBlock
		for i := range planTodos {
			updates = append(updates, use("TaskUpdate", map[string]any{"taskId": string(rune('1' + i)), "status": "completed"}))
		}
		return calls(updates...)
	}
	return fakemodel.Reply{Blocks: []fakemodel.ReplyBlock{{Type: "text", Text: "All done: the notes say hello, missing.txt is missing, made.txt is made."}},
		StopReason: "end_turn", Chunks: 10, Delay: 150 * time.Millisecond}
}

// TestSlackE2EPlanTasksAndFeedback: with the real CLI (its to-do tools
// on), a turn that plans three tasks and makes three tool calls streams
// into Slack as a plan (display mode plan, every task complete at the end)
// and three tool tasks with their final states (the failed Read as error;
// the Bash call pending while its card waits, then complete); the card
// stays a message of its own; the final message carries feedback buttons;
// a stranger's click is refused privately and counts nothing; alice's 👍
// is recorded (metric agentbridge_feedback_total).
func TestSlackE2EPlanTasksAndFeedback(t *testing.T) {
	t.Parallel()
	var dir atomic.Pointer[string]
	e := startSlackBridgeWith(t, profileOptions{plan: planTurn(&dir), env: []string{"CLAUDE_CODE_ENABLE_TODO_TOOLS=1"}})
	dir.Store(&e.workdir)
	if err := os.WriteFile(filepath.Join(e.workdir, "notes.txt"), []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	root := e.slack.Mention(slackChan, alice, "check the files", "")
	card := e.waitCard(t, root)
	if !strings.Contains(e.text(card), "touch made.txt") || card.Stream != "" {
		t.Errorf("card = %+v, want a posted message of its own about the command", card)
	}
	// While the card waits, the stream shows the Bash task pending: in an
	// update, or in the stream's start when the turn's first second (the
	// edit interval) was over only then.
	pending := func(m slackfake.Message) bool {
		return m.ThreadTS == root && slices.ContainsFunc(m.Tasks, func(t slackfake.Task) bool {
			return t.Title == "Bash: touch made.txt" && t.Status == "pending"
		})
	}
	if err := e.slack.WaitFor(func() bool {
		return slices.ContainsFunc(e.slack.Posts(), pending) || slices.ContainsFunc(e.slack.Updates(), pending)
	}, e2eWait); err != nil {
		t.Errorf("the Bash task was not shown pending while its card waited: %v\nposts: %s", err, e.dump())
	}
	e.slack.Click(slackChan, card.TS, alice, "allow", "")
	var final slackfake.Message
	err := e.slack.WaitFor(func() bool {
		for _, p := range e.slack.Posts() {
			if m, _ := e.slack.Current(p.Channel, p.TS); m.ThreadTS == root && m.Stream == slackfake.StreamStopped && m.Feedback != nil {
				final = m
				return true
			}
		}
		return false
	}, e2eWait)
	if err != nil {
		t.Fatalf("no stopped stream with feedback buttons in the thread: %v\nposts: %s", err, e.dump())
	}
	if !strings.Contains(final.Text, "All done") {
		t.Errorf("streamed answer = %q", final.Text)
	}
	if final.TaskDisplayMode != "plan" || final.Plan != "Plan · 3 of 3 done" {
		t.Errorf("display mode %q, plan %q; want plan, 3 of 3 done", final.TaskDisplayMode, final.Plan)
	}
	got := map[string]string{}
	var tools []slackfake.Task
	for _, task := range final.Tasks {
		if strings.HasPrefix(task.ID, "plan-") {
			got[task.Title] = task.Status
		} else {
			tools = append(tools, task)
		}
	}
	for _, todo := range planTodos {
		if got[todo] != "complete" {
			t.Errorf("plan task %q = %q, want complete (tasks %+v)", todo, got[todo], final.Tasks)
		}
	}
	want := []struct{ title, status string }{{"Read: notes.txt", "complete"}, {"Read: missing.txt", "error"}, {"Bash: touch made.txt", "complete"}}
	if len(tools) != len(want) {
		t.Fatalf("tool tasks = %+v, want %d", tools, len(want))
	}
	for i, w := range want {
		if tools[i].Title != w.title || tools[i].Status != w.status {
			t.Errorf("tool task %d = %+v, want %q %s", i, tools[i], w.title, w.status)
		}
	}
	if n := e.slack.CallCount("chat.startStream"); n != 1 {
		t.Errorf("%d streams started, want 1", n)
	}

	// A stranger's click is refused privately; alice's 👍 is recorded.
	e.slack.ClickFeedback(final.Channel, final.TS, stranger, false)
	if _, err := e.slack.WaitForEphemeral(func(m slackfake.Ephemeral) bool {
		return m.User == stranger && strings.Contains(m.Text, "cannot rate")
	}, e2eWait); err != nil {
		t.Errorf("stranger's feedback not refused privately: %v", err)
	}
	e.slack.ClickFeedback(final.Channel, final.TS, alice, true)
	testkit.WaitUntilSeen(t, "the 👍 counted", e2eWait, func() (bool, string) {
		m := e.bridge.metrics(t)
		return strings.Contains(m, `agentbridge_feedback_total{bot="team",rating="good"} 1`), "\n" + grepLines(m, "feedback")
	})
	if m := e.bridge.metrics(t); strings.Contains(m, `rating="bad"`) {
		t.Errorf("the stranger's 👎 counted:\n%s", grepLines(m, "feedback"))
	}
}
