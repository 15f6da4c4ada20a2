package app

import (
	"context"
	"log/slog"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/adapters/discord"
	"github.com/agentbridge/agentbridge/bridges/adapters/slack"
	"github.com/agentbridge/agentbridge/bridges/adapters/web"
	"github.com/agentbridge/agentbridge/bridges/adapters/whatsapp"
	"github.com/agentbridge/agentbridge/config"
)

// platform is one chat platform the bridge runs: its adapter's entry for
// the config (name, settings, schedule targets) and its constructor.
type platform struct {
	config config.Platform
	// open makes the adapter of one bot of the platform; the returned
	// function releases what the adapter holds once it has stopped. nil:
	// the web console, made once the store is open (see newWebConsole).
	open opener
}

// opener is the constructor every adapter has (its Open function), made
// to return the contract's Platform.
type opener func(ctx context.Context, cfg *config.Config, bot *config.Bot, logger *slog.Logger) (bridges.Platform, func() error, error)

// adapterOpen turns an adapter's Open into an opener.
func adapterOpen[B bridges.Platform](open func(context.Context, *config.Config, *config.Bot, *slog.Logger) (B, func() error, error)) opener {
	return func(ctx context.Context, cfg *config.Config, bot *config.Bot, logger *slog.Logger) (bridges.Platform, func() error, error) {
		p, release, err := open(ctx, cfg, bot, logger)
		if err != nil {
			return nil, nil, err
		}
		return p, release, nil
	}
}

// platforms is the bridge's one list of chat platforms, in the order
// config messages name them. Adding a platform: its adapter package
// offers Platform() and Open, and gets a line here.
func platforms() []platform {
	return []platform{
		{slack.Platform(), adapterOpen(slack.Open)},
		{discord.Platform(), adapterOpen(discord.Open)},
		{whatsapp.Platform(), adapterOpen(whatsapp.Open)},
		{web.Platform(), nil},
	}
}

// ConfigPlatforms is what config.Load and config.Parse need of the
// bridge's platforms: their names, settings and schedule targets.
func ConfigPlatforms() []config.Platform {
	ps := platforms()
	out := make([]config.Platform, len(ps))
	for i, p := range ps {
		out[i] = p.config
	}
	return out
}

// LoadConfig loads and validates the config file at path with the
// bridge's platforms, expanding ${ENV} through lookupEnv (config.Load);
// its error lists every problem with its line.
func LoadConfig(path string, lookupEnv func(string) (string, bool)) (*config.Config, error) {
	return config.Load(path, lookupEnv, ConfigPlatforms())
}
