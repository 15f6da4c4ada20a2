package fallback

import (
	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core/worker"
)

// Observer is the observer of a core without one (CoreOptions.Observer
// nil): it sees nothing.
type Observer struct{}

var _ worker.Observer = Observer{}

func (Observer) AgentEvent(bridges.ConversationKey, streamjson.Event)       {}
func (Observer) Shown(bridges.ConversationKey, bridges.Message)             {}
func (Observer) Sent(key bridges.ConversationKey, msgID, from, text string) {}
