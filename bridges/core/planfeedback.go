package core

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/store"
)

// This file holds what a native stream (bridges.Streamer) shows beyond
// text and tool tasks: the agent's to-do list as a plan, a tool waiting
// for a person's decision as a pending task, and the 👍/👎 feedback
// buttons under a streamed answer with the recording of their clicks.

// maxPlanTaskRunes bounds a plan task's title; maxPlanTasks the tasks a
// plan keeps.
const (
	maxPlanTaskRunes = 200
	maxPlanTasks     = 100
)

// planState is the agent's to-do list in a conversation, as its tool
// calls left it: TodoWrite replaces the whole list; TaskCreate adds a task
// (its CLI id known from the result, "Task #N created successfully"),
// TaskUpdate changes one (status, subject; "deleted" removes it). The
// tasks persist across turns, like the CLI's own.
type planState struct {
	tasks []planTask
}

type planTask struct {
	cliID  string // the CLI's task id ("" until the TaskCreate result)
	id     string // the StreamTask id, stable for the task's life
	title  string
	status string // a bridges.Task* state
}

// isPlanTool reports whether tool is one of the agent's to-do tools: it
// shows as the plan, not as a task of its own.
func isPlanTool(tool string) bool {
	switch tool {
	case "TodoWrite", "TaskCreate", "TaskUpdate", "TaskList", "TaskGet":
		return true
	}
	return false
}

// todoStatus maps a to-do status of the CLI to a task state.
func todoStatus(s string) string {
	switch s {
	case "in_progress":
		return bridges.TaskRunning
	case "completed":
		return bridges.TaskComplete
	}
	return bridges.TaskPending
}

// planTitle is a one-line task title.
func planTitle(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) > maxPlanTaskRunes {
		s = string([]rune(s)[:maxPlanTaskRunes-1]) + "…"
	}
	return s
}

// onToolUse applies a to-do tool call's input. It reports whether the
// plan changed.
func (p *planState) onToolUse(u streamjson.ToolUse) bool {
	var in struct {
		Todos []struct {
			Content string `json:"content"`
			Status  string `json:"status"`
		} `json:"todos"`
		Subject string `json:"subject"`
		TaskID  string `json:"taskId"`
		Status  string `json:"status"`
	}
	if !isPlanTool(u.Name) || json.Unmarshal(u.Input, &in) != nil {
		return false
	}
	switch u.Name {
	case "TodoWrite":
		p.tasks = p.tasks[:0]
		for i, td := range in.Todos {
			if i == maxPlanTasks {
				break
			}
			title := cmp.Or(planTitle(td.Content), "Task "+strconv.Itoa(i+1))
			p.tasks = append(p.tasks, planTask{id: "plan-" + strconv.Itoa(i+1), title: title, status: todoStatus(td.Status)})
		}
		return true
	case "TaskCreate":
		if len(p.tasks) == maxPlanTasks || planTitle(in.Subject) == "" {
			return false
		}
		p.tasks = append(p.tasks, planTask{id: "plan-" + u.ID, title: planTitle(in.Subject), status: bridges.TaskPending, cliID: "?" + u.ID})
		return true
	case "TaskUpdate":
		i := p.find(in.TaskID)
		if i < 0 {
			return false
		}
		if in.Status == "deleted" {
			p.tasks = append(p.tasks[:i], p.tasks[i+1:]...)
			return true
		}
		if in.Status != "" {
			p.tasks[i].status = todoStatus(in.Status)
		}
		if t := planTitle(in.Subject); t != "" {
			p.tasks[i].title = t
		}
		return true
	}
	return false
}

// onResult learns the CLI's id of a created task from its result; a
// failed TaskCreate is dropped. It reports whether the plan changed.
func (p *planState) onResult(u streamjson.ToolUse, r streamjson.ToolResult) bool {
	if u.Name != "TaskCreate" {
		return false
	}
	i := p.find("?" + u.ID)
	if i < 0 {
		return false
	}
	_, rest, ok := strings.Cut(r.Content, "Task #")
	id, _, _ := strings.Cut(rest, " ")
	if r.IsError || !ok || id == "" {
		p.tasks = append(p.tasks[:i], p.tasks[i+1:]...)
		return true
	}
	p.tasks[i].cliID = id
	return false
}

func (p *planState) find(cliID string) int {
	for i, t := range p.tasks {
		if cliID != "" && t.cliID == cliID {
			return i
		}
	}
	return -1
}

// snapshot is the plan as a stream shows it, or nil when it is empty.
func (p *planState) snapshot() *bridges.StreamPlan {
	if len(p.tasks) == 0 {
		return nil
	}
	out := &bridges.StreamPlan{}
	done := 0
	for _, t := range p.tasks {
		if t.status == bridges.TaskComplete {
			done++
		}
		out.Tasks = append(out.Tasks, bridges.StreamTask{ID: t.id, Title: t.title, Status: t.status})
	}
	out.Title = fmt.Sprintf("Plan · %d of %d done", done, len(out.Tasks))
	return out
}

// notePlanTool updates the conversation's plan with a tool call (or, with
// r, its result) and, when it changed, has the turn's stream show it.
func (cv *conversation) notePlanTool(ctx context.Context, u streamjson.ToolUse, r *streamjson.ToolResult) {
	changed := false
	if r == nil {
		changed = cv.plan.onToolUse(u)
	} else {
		changed = cv.plan.onResult(u, *r)
	}
	if !changed || cv.turn == nil {
		return
	}
	cv.turn.live.stream.Plan = cv.plan.snapshot()
	cv.turn.live.dirty = true
	cv.touchLive(ctx)
}

// toolWaiting notes that the tool call id waits for a person's decision
// on its card: its task shows pending. It reports whether the stream has
// something new to show.
func (l *liveMsg) toolWaiting(id string) bool {
	if !l.stream.SetWaiting(id, l.stream.s != nil) {
		return false
	}
	l.dirty = true
	return true
}

// toolDecided notes that the card of tool call id was decided: an
// allowed call's task shows in progress again (a refused one becomes
// failed with its result, toolDone). It reports whether the stream has
// something new to show.
func (l *liveMsg) toolDecided(id string, allowed bool) bool {
	if !l.stream.Decided(id, allowed, l.stream.s != nil) {
		return false
	}
	l.dirty = true
	return true
}

// feedbackPrefix starts the CardID of an answer's feedback buttons; the
// rest is the answer's outbox id.
const feedbackPrefix = "feedback:"

// feedbackChunk asks for feedback buttons under the answer that is the
// outbox reply replyID.
func feedbackChunk(replyID string) bridges.StreamChunk {
	return bridges.StreamChunk{Feedback: feedbackPrefix + replyID}
}

// onFeedback records a 👍/👎 click on an answer's feedback buttons. Anyone
// allowed to talk to the bot in the conversation may rate its answers
// (Allowed, as for writing there); the rated answer must be a reply of
// that very conversation. A person's second click replaces their first.
// The clicker hears back privately only when the click is refused.
func (c *Core) onFeedback(ctx context.Context, a bridges.Action) error {
	replyID := strings.TrimPrefix(a.CardID, feedbackPrefix)
	rating := store.Rating(a.Choice)
	if !c.Allowed(a.Key, a.UserID) {
		c.log.Info("feedback refused: not allowed in the conversation", "key", a.Key, "user", a.UserID)
		replyPrivately(ctx, c.log, a, "Sorry, you cannot rate answers here.")
		return nil
	}
	if rating != store.RatingGood && rating != store.RatingBad {
		c.log.Warn("feedback ignored: not a rating", "reply", replyID, "choice", a.Choice, "user", a.UserID)
		return nil
	}
	row, err := c.st.OutboxByID(ctx, replyID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		replyPrivately(ctx, c.log, a, "This answer is too old to rate.")
		return nil
	case err != nil:
		return fmt.Errorf("feedback on %s: %w", replyID, err)
	case bridges.ConversationKey(row.Key) != a.Key:
		c.log.Warn("feedback refused: the answer is not this conversation's", "key", a.Key, "reply", replyID, "user", a.UserID)
		return nil
	}
	changed, err := c.st.RecordFeedback(ctx, store.Feedback{ReplyID: replyID, ConversationID: row.ConversationID, UserID: a.UserID, Rating: rating})
	if err != nil {
		replyPrivately(ctx, c.log, a, "The bridge could not record your feedback; please try again later.")
		return fmt.Errorf("feedback on %s: %w", replyID, err)
	}
	if changed {
		c.opts.Metrics.Feedback(a.Key.Bot, string(rating))
		c.log.Info("answer rated", "key", a.Key, "reply", replyID, "rating", rating, "user", a.UserID)
	}
	return nil
}
