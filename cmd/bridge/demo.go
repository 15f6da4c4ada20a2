package main

import (
	"errors"
	"log/slog"
	"maps"
	"slices"
	"strings"

	"github.com/agentbridge/agentbridge/agent/demomodel"
	"github.com/agentbridge/agentbridge/agent/fakemodel"
	"github.com/agentbridge/agentbridge/config"
)

// demoEnvPrefixes are the profile env keys demo mode drops before it adds
// the demo model's: every Anthropic and Claude Code setting (credentials,
// base URLs, Bedrock/Vertex switches), so no agent reaches a real model
// and no credential reaches the demo model.
var demoEnvPrefixes = []string{"ANTHROPIC_", "CLAUDE_CODE_"}

// errDemoNoWebBot: demo mode has nothing to run.
var errDemoNoWebBot = errors.New("demo mode runs only the web console, and the config has no bot with platform: web " +
	"(add one, see `bridge example-config -minimal`)")

// startDemo turns cfg into demo mode and starts the demo model: bots other
// than web bots are removed (each logged), and every agent profile's env
// points at the model (see demoAgentEnv). It fails with a usage error when
// no web bot remains or http.listen is off (the console is served there).
// The caller must Close the returned server after the agents have stopped.
func startDemo(cfg *config.Config, logger *slog.Logger) (*fakemodel.Server, error) {
	var kept []*config.Bot
	for _, b := range cfg.Bots {
		if b.Platform != config.PlatformWeb {
			logger.Warn("demo mode: bot skipped, only the web console runs", "bot", b.Name, "platform", b.Platform)
			continue
		}
		kept = append(kept, b)
	}
	if len(kept) == 0 {
		return nil, usageError{errDemoNoWebBot}
	}
	if cfg.HTTP.Listen == "" {
		return nil, usagef("demo mode needs http.listen: the web console is served there")
	}
	cfg.Bots = kept

	srv, err := demomodel.Start(logger.With("component", "demomodel"))
	if err != nil {
		return nil, err
	}
	env := demomodel.AgentEnv(srv)
	for _, name := range slices.Sorted(maps.Keys(cfg.Agents)) {
		a := cfg.Agents[name]
		a.Env = demoAgentEnv(a.Env, env)
	}
	logger.Warn("DEMO MODE: agents talk to the bridge's built-in scripted model, not to Claude; "+
		"nothing leaves this machine. Run without -demo, with ANTHROPIC_API_KEY or CLAUDE_CODE_OAUTH_TOKEN, to use Claude",
		"model_url", srv.URL(), "bots", len(kept))
	return srv, nil
}

// demoAgentEnv returns profile with every key that starts with one of
// demoEnvPrefixes removed and demo added on top. It does not modify its
// arguments.
func demoAgentEnv(profile, demo map[string]string) map[string]string {
	out := make(map[string]string, len(profile)+len(demo))
	for k, v := range profile {
		if !slices.ContainsFunc(demoEnvPrefixes, func(p string) bool { return strings.HasPrefix(k, p) }) {
			out[k] = v
		}
	}
	maps.Copy(out, demo)
	return out
}
