// Package demo is `bridge run -demo`: the config turned into demo mode
// (the web console only, every agent pointed at the built-in scripted
// model) and that model started.
package demo

import (
	"errors"
	"log/slog"
	"maps"
	"slices"
	"strings"

	"github.com/agentbridge/agentbridge/agent/demomodel"
	"github.com/agentbridge/agentbridge/agent/fakemodel"
	"github.com/agentbridge/agentbridge/cmd/bridge/internal/cli"
	"github.com/agentbridge/agentbridge/config"
)

// envPrefixes are the profile env keys demo mode drops before it adds
// the demo model's: every Anthropic and Claude Code setting (credentials,
// base URLs, Bedrock/Vertex switches), so no agent reaches a real model
// and no credential reaches the demo model.
var envPrefixes = []string{"ANTHROPIC_", "CLAUDE_CODE_"}

// errNoWebBot: demo mode has nothing to run.
var errNoWebBot = errors.New("demo mode runs only the web console, and the config has no bot with platform: web " +
	"(add one, see `bridge example-config -minimal`)")

// Start turns cfg into demo mode and starts the demo model: bots other
// than web bots are removed (each logged), and every agent profile's env
// points at the model (see agentEnv). It fails with a usage error when
// no web bot remains or http.listen is off (the console is served there).
// The caller must Close the returned server after the agents have stopped,
// and turn every config it reloads into demo mode too with Apply.
func Start(cfg *config.Config, logger *slog.Logger) (*fakemodel.Server, error) {
	if err := apply(cfg, nil, logger); err != nil {
		return nil, err
	}
	srv, err := demomodel.Start(logger.With("component", "demomodel"))
	if err != nil {
		return nil, err
	}
	env := demomodel.AgentEnv(srv)
	setEnv(cfg, env)
	logger.Warn("DEMO MODE: agents talk to the bridge's built-in scripted model, not to Claude; "+
		"nothing leaves this machine. Run without -demo, with ANTHROPIC_API_KEY or CLAUDE_CODE_OAUTH_TOKEN, to use Claude",
		"model_url", srv.URL(), "bots", len(cfg.Bots))
	return srv, nil
}

// Apply turns a config reloaded while the bridge runs in demo mode into
// demo mode as Start did the first one (the web bots alone, every agent
// on the demo model srv), so that a reload keeps what -demo set.
func Apply(cfg *config.Config, srv *fakemodel.Server, logger *slog.Logger) error {
	return apply(cfg, demomodel.AgentEnv(srv), logger)
}

// apply keeps cfg's web bots and, with env, sets every profile's env.
func apply(cfg *config.Config, env map[string]string, logger *slog.Logger) error {
	var kept []*config.Bot
	for _, b := range cfg.Bots {
		if b.Platform != config.PlatformWeb {
			logger.Warn("demo mode: bot skipped, only the web console runs", "bot", b.Name, "platform", b.Platform)
			continue
		}
		kept = append(kept, b)
	}
	if len(kept) == 0 {
		return cli.UsageError{Err: errNoWebBot}
	}
	if cfg.HTTP.Listen == "" {
		return cli.Usagef("demo mode needs http.listen: the web console is served there")
	}
	cfg.Bots = kept
	if env != nil {
		setEnv(cfg, env)
	}
	return nil
}

// setEnv points every agent profile of cfg at the demo model's env.
func setEnv(cfg *config.Config, env map[string]string) {
	for _, name := range slices.Sorted(maps.Keys(cfg.Agents)) {
		a := cfg.Agents[name]
		a.Env = agentEnv(a.Env, env)
	}
}

// agentEnv returns profile with every key that starts with one of
// envPrefixes removed and demo added on top. It does not modify its
// arguments.
func agentEnv(profile, demo map[string]string) map[string]string {
	out := make(map[string]string, len(profile)+len(demo))
	for k, v := range profile {
		if !slices.ContainsFunc(envPrefixes, func(p string) bool { return strings.HasPrefix(k, p) }) {
			out[k] = v
		}
	}
	maps.Copy(out, demo)
	return out
}
