package render

import (
	"cmp"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/bridges"
)

// maxPlanTaskRunes bounds a plan task's title; maxPlanTasks the tasks a
// plan keeps.
const (
	maxPlanTaskRunes = 200
	maxPlanTasks     = 100
)

// Plan is the agent's to-do list in a conversation, as its tool
// calls left it: TodoWrite replaces the whole list; TaskCreate adds a task
// (its CLI id known from the result, "Task #N created successfully"),
// TaskUpdate changes one (status, subject; "deleted" removes it). The
// tasks persist across turns, like the CLI's own.
type Plan struct {
	tasks []planTask
}

type planTask struct {
	cliID  string // the CLI's task id ("" until the TaskCreate result)
	id     string // the StreamTask id, stable for the task's life
	title  string
	status string // a bridges.Task* state
}

// IsPlanTool reports whether tool is one of the agent's to-do tools: it
// shows as the plan, not as a task of its own.
func IsPlanTool(tool string) bool {
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

// OnToolUse applies a to-do tool call's input. It reports whether the
// plan changed.
func (p *Plan) OnToolUse(u streamjson.ToolUse) bool {
	var in struct {
		Todos []struct {
			Content string `json:"content"`
			Status  string `json:"status"`
		} `json:"todos"`
		Subject string `json:"subject"`
		TaskID  string `json:"taskId"`
		Status  string `json:"status"`
	}
	if !IsPlanTool(u.Name) || json.Unmarshal(u.Input, &in) != nil {
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

// OnResult learns the CLI's id of a created task from its result; a
// failed TaskCreate is dropped. It reports whether the plan changed.
func (p *Plan) OnResult(u streamjson.ToolUse, r streamjson.ToolResult) bool {
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

func (p *Plan) find(cliID string) int {
	for i, t := range p.tasks {
		if cliID != "" && t.cliID == cliID {
			return i
		}
	}
	return -1
}

// Snapshot is the plan as a stream shows it, or nil when it is empty.
func (p *Plan) Snapshot() *bridges.StreamPlan {
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
