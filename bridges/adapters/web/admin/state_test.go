package admin

import (
	"testing"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/store"
)

// The live agents page says what an agent does in the chat's words.
func TestAgentState(t *testing.T) {
	waiting := map[string]store.Approval{
		"c1": {ConversationID: "c1", ToolName: "Bash", RequestedBy: "ana"},
		"c2": {ConversationID: "c2", ToolName: "AskUserQuestion", RequestedBy: "bob"},
	}
	cases := []struct {
		a        bridges.LiveAgent
		starting bool
		want     string
	}{
		{bridges.LiveAgent{ConversationID: "c1", Busy: true}, false, "Waiting for your approval"},
		{bridges.LiveAgent{ConversationID: "c2", Busy: true}, false, "Waiting for bob’s answer"},
		{bridges.LiveAgent{ConversationID: "c3", Busy: true}, false, "Working…"},
		{bridges.LiveAgent{ConversationID: "c4"}, false, "Idle"},
		{bridges.LiveAgent{ConversationID: "c5"}, true, "Starting the agent…"},
		// The message is written to a process that has not begun its turn
		// (a slow start): the chat page says it starts, and so does this.
		{bridges.LiveAgent{ConversationID: "c6", Busy: true}, true, "Starting the agent…"},
	}
	for _, tc := range cases {
		if got := agentState(tc.a, waiting, tc.starting, "ana"); got != tc.want {
			t.Errorf("agentState(%s) = %q, want %q", tc.a.ConversationID, got, tc.want)
		}
	}
}
