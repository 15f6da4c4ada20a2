package bridges

import (
	"errors"
	"time"
)

// This file is the operator's view of the core (the web console's admin
// pages): which agents are live, stopping one, and deciding a pending
// approval of any platform as a bridge admin.

// ErrNotOpen is returned by DecideApproval when the request was decided,
// expired or withdrawn meanwhile.
var ErrNotOpen = errors.New("the request is no longer open")

// OperatorPrefix marks decisions taken in the operator view: the audit log
// records "web:NAME" as the decider.
const OperatorPrefix = "web:"

// WarmSpareState is what an agent profile's warm spares are doing, for the
// operator view (see agent/pool.SpareStatus).
type WarmSpareState struct {
	Profile         string
	Auto            bool // warm_spares: auto
	Target, Max     int  // spares wanted now; Max bounds Target with Auto
	Ready, Starting int
	MemShort        bool   // Auto: no spare starts, less than spare_memory available
	Failing         string // why spares fail to start ("" = healthy)
}

// LiveAgent is one live agent process and the conversation it serves.
type LiveAgent struct {
	Key            ConversationKey
	ConversationID string
	Profile        string
	PID            int
	SessionID      string
	Started        time.Time
	LastActive     time.Time
	Busy           bool
	RSSBytes       int64 // resident memory of the process tree; 0 = unknown
	// BackgroundTasks describes the agent's running background tasks
	// (shell commands, subagents) as the CLI last listed them.
	BackgroundTasks []string
}
