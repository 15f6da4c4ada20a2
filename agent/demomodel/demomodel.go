package demomodel

import (
	"fmt"
	"log/slog"
	"strings"

	"github.com/agentbridge/agentbridge/agent/fakemodel"
)

// Start starts the demo model on a free port of 127.0.0.1, logging through
// logger. The caller must Close the server after the agents using it have
// stopped.
func Start(logger *slog.Logger) (*fakemodel.Server, error) {
	srv, err := fakemodel.StartWith(fakemodel.Options{Logger: logger, Plan: Plan, Forget: true})
	if err != nil {
		return nil, fmt.Errorf("start demo model: %w", err)
	}
	return srv, nil
}

// AgentEnv returns the environment that points an agent profile at srv:
// ANTHROPIC_BASE_URL, a dummy ANTHROPIC_API_KEY, CLAUDE_CODE_MAX_RETRIES=0
// and the switches that keep the CLI offline (fakemodel.Server.Env), as a
// map for profile.Agent.Env. A new map on every call.
func AgentEnv(srv *fakemodel.Server) map[string]string {
	env := map[string]string{}
	for _, kv := range srv.Env() {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	return env
}
