package core_test

import (
	"testing"

	"github.com/agentbridge/agentbridge/agent/streamjson"
)

// TestResultsLostIsTold: when the session reports a gap in the results'
// numbering (a result the CLI sent never arrived), the conversation is
// told that a reply went missing instead of the reply vanishing silently.
func TestResultsLostIsTold(t *testing.T) {
	h := start(t, setup{live: true})
	k := key("T1")
	h.send(k, "m1", "alice", "hello")
	h.waitText(k, "pong: hello")
	h.session(1).Emit(streamjson.ResultsLost{First: 1, Count: 1})
	h.waitText(k, "never reached the bridge")
}
