package agent

import (
	"slices"
	"sort"
	"time"

	"github.com/agentbridge/agentbridge/agent/streamjson"
)

// turnState is what a Session knows about the agent's activity, derived
// from what it sent and what the CLI printed. Guarded by Session.mu.
type turnState struct {
	msgs       map[string]string           // sent message uuid → last lifecycle state ("" = no receipt yet)
	turn       bool                        // a turn runs: system/init seen, its result not yet
	perms      map[string][]byte           // pending can_use_tool request id → original input
	elicits    map[string]bool             // pending elicitation request ids
	bg         []streamjson.BackgroundTask // the last background_tasks_changed list
	tasks      map[string]bool             // running task id → backgrounded
	lastActive time.Time
	everSent   bool // a user message was written: the session can be resumed
	exited     bool
	nextResult int // the result_index the next numbered result should carry
}

func newTurnState() turnState {
	return turnState{
		msgs:       map[string]string{},
		perms:      map[string][]byte{},
		elicits:    map[string]bool{},
		tasks:      map[string]bool{},
		lastActive: time.Now(),
	}
}

// busy: see Session.Busy.
func (t *turnState) busy() bool {
	if t.exited {
		return false
	}
	return len(t.msgs) > 0 || t.turn || len(t.perms) > 0 || len(t.elicits) > 0 || len(t.tasks) > 0
}

func (t *turnState) sent(uuid string) {
	t.msgs[uuid] = ""
	t.everSent = true
	t.lastActive = time.Now()
}

func (t *turnState) unsent(uuid string) { delete(t.msgs, uuid) }

// takePermission removes and returns a pending request's input.
func (t *turnState) takePermission(id string) ([]byte, bool) {
	in, ok := t.perms[id]
	if ok {
		delete(t.perms, id)
	}
	return in, ok
}

func (t *turnState) pendingPermissionIDs() []string {
	ids := make([]string, 0, len(t.perms))
	for id := range t.perms {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// observe updates the state for one event read from the CLI.
func (t *turnState) observe(ev streamjson.Event) {
	t.lastActive = time.Now()
	switch e := ev.(type) {
	case streamjson.Lifecycle:
		if _, ours := t.msgs[e.UUID]; !ours {
			return // a message of an earlier process, or not sent by this host
		}
		switch e.State {
		case streamjson.LifecycleCompleted, streamjson.LifecycleCancelled:
			delete(t.msgs, e.UUID)
		default:
			t.msgs[e.UUID] = e.State
		}
	case streamjson.Init:
		t.turn = true
	case streamjson.Result:
		t.turn = false
		// Messages the finished turn was working on are done even if their
		// "completed" receipt is still to come; queued ones are not. The
		// messages the result names (user_message_uuids) are done too,
		// whatever receipt they last had.
		for id, st := range t.msgs {
			if st == streamjson.LifecycleStarted {
				delete(t.msgs, id)
			}
		}
		for _, id := range e.UserMessageUUIDs {
			delete(t.msgs, id)
		}
	case streamjson.PermissionRequest:
		t.perms[e.RequestID] = e.Input
	case streamjson.PermissionCancelled:
		delete(t.perms, e.RequestID)
		delete(t.elicits, e.RequestID)
	case streamjson.Elicitation:
		t.elicits[e.RequestID] = true
	case streamjson.TaskStarted:
		t.tasks[e.TaskID] = e.Background
	case streamjson.TaskNotification:
		delete(t.tasks, e.TaskID)
	case streamjson.BackgroundTasks:
		t.bg = slices.Clone(e.Tasks)
		// The authoritative list of background tasks: forget finished ones
		// whose notification was missed; foreground tasks end with the turn.
		listed := make(map[string]bool, len(e.Tasks))
		for _, bt := range e.Tasks {
			listed[bt.TaskID] = true
			t.tasks[bt.TaskID] = true
		}
		for id, bg := range t.tasks {
			if bg && !listed[id] {
				delete(t.tasks, id)
			}
		}
	}
}

// numberResult checks a result's result_index against the numbering of
// the process's results so far and returns the gap it shows (Count 0: none,
// or the result is not numbered). A lower index than expected (never seen
// from the CLI) resynchronizes the count without a report.
func (t *turnState) numberResult(r streamjson.Result) streamjson.ResultsLost {
	if !r.Indexed {
		return streamjson.ResultsLost{}
	}
	var lost streamjson.ResultsLost
	if r.Index > t.nextResult {
		lost = streamjson.ResultsLost{First: t.nextResult, Count: r.Index - t.nextResult}
	}
	t.nextResult = r.Index + 1
	return lost
}

// exit clears everything: nothing is pending once the process is gone.
func (t *turnState) exit() {
	t.exited = true
	t.turn = false
	clear(t.msgs)
	clear(t.perms)
	clear(t.elicits)
	t.bg = nil
	clear(t.tasks)
}
