package reload

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/bridges/core/render"
	"github.com/agentbridge/agentbridge/config"
)

// Replacement is one conversation's agent replacement after a reload
// changed its profile's spawn settings: the agent process is replaced at
// its next idle moment (never mid-turn), resuming the same session, so the
// history is kept. A background task delays it unless forced; the thread
// is told once that the replacement waits for it. The zero value has no
// replacement due. It is owned by the conversation's worker (not safe for
// concurrent use).
type Replacement struct {
	due   int             // replaceNone, replaceIdle or replaceForce
	told  bool            // told that the replacement waits for a background task
	tasks map[string]bool // the live agent's running background tasks, by task id
	after time.Time       // a due replacement waits until then
}

// Replacement states.
const (
	replaceNone  = iota
	replaceIdle  // at the next idle moment: no turn, no background task
	replaceForce // at the next moment without a turn, background tasks or not
)

// TaskSettle is how long after its last background task ended an agent
// due for replacement is left to start its own turn on the task's result.
const TaskSettle = 3 * time.Second

// Due reports whether a replacement is due.
func (r *Replacement) Due() bool { return r.due != replaceNone }

// Holds reports whether pending messages wait for the replacement of the
// live agent (live: the conversation has one) instead of going to the old
// process: a replacement is due and only a turn ending stands before it
// (while a background task delays it unforced, the old process keeps
// answering).
func (r *Replacement) Holds(live bool) bool {
	return r.due != replaceNone && live && (len(r.tasks) == 0 || r.due == replaceForce)
}

// Note keeps the set of the agent's running background tasks from its
// events (the worker calls it for each event of the live session); now is
// the event's time.
func (r *Replacement) Note(ev streamjson.Event, now time.Time) {
	switch e := ev.(type) {
	case streamjson.TaskStarted:
		if e.Background {
			if r.tasks == nil {
				r.tasks = make(map[string]bool)
			}
			r.tasks[e.TaskID] = true
		}
	case streamjson.TaskNotification:
		delete(r.tasks, e.TaskID)
		if r.due != replaceNone && len(r.tasks) == 0 {
			// The CLI starts a turn of its own on the task's result: give
			// it the time to begin before the process is replaced.
			r.after = now.Add(TaskSettle)
		}
	case streamjson.BackgroundTasks:
		clear(r.tasks)
		for _, t := range e.Tasks {
			if r.tasks == nil {
				r.tasks = make(map[string]bool)
			}
			r.tasks[t.TaskID] = true
		}
	case streamjson.Exit:
		clear(r.tasks)
	}
}

// OnReload runs on the worker for each applied reload: c takes cfg's bot
// and profile and, when respawn (its profile's spawn settings changed),
// its agent is marked for replacement, forced or not.
func OnReload(ctx context.Context, c Conv, cfg *config.Config, respawn, force bool) {
	c.Refresh(cfg)
	r := c.Replacement()
	if respawn && c.Spawned() {
		r.due = max(r.due, replaceIdle)
		if force {
			r.due = replaceForce
		}
	}
	r.Check(ctx, c)
}

// Check replaces c's agent process if a replacement is due and it is
// idle (the worker calls it after every input): the next message spawns
// one with the new settings, resuming the session. It never interrupts a
// turn; a background task waits unless forced.
func (r *Replacement) Check(ctx context.Context, c Conv) {
	if r.due == replaceNone {
		return
	}
	if !c.Spawned() {
		r.due, r.told = replaceNone, false // the next spawn uses the new profile anyway
		clear(r.tasks)
		return
	}
	if c.InTurn() {
		return
	}
	bg := len(r.tasks) > 0
	if bg && r.due != replaceForce {
		if !r.told {
			r.told = true
			c.Notice(ctx, "🔄 The bridge's config changed for this agent ("+render.CodeSpan(c.Profile().Name)+"). It restarts with the new settings "+
				"once its background task has finished; the conversation's history is kept.")
		}
		return
	}
	if !bg && c.AgentBusy() {
		return // a turn the agent started itself
	}
	if now := c.Now(); now.Before(r.after) {
		c.Recheck(r.after.Sub(now))
		return // the agent may still answer a background task that just ended
	}
	r.due, r.told = replaceNone, false
	clear(r.tasks)
	c.Log().Info("agent replaced after a config reload", "profile", c.Profile().Name, "background_task_ended", bg)
	if bg {
		c.Notice(ctx, "🔄 The bridge's config changed for this agent ("+render.CodeSpan(c.Profile().Name)+"): an admin restarted it now, "+
			"which ended its background task. The conversation's history is kept.")
	}
	c.Restart(ctx)
}

// StatusLine is !status's line about the config in force (g), "" when
// the core reads no live config; due says the agent restarts with it.
func StatusLine(g config.Generation, due bool) string {
	if g.Number == 0 {
		return ""
	}
	line := fmt.Sprintf("\n• config: generation %d, in force since %s", g.Number, g.At.UTC().Format("2006-01-02 15:04:05 UTC"))
	if due {
		line += " (the agent restarts with it when idle)"
	}
	return strings.TrimRight(line, " ")
}
