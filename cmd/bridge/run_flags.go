package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"

	"github.com/agentbridge/agentbridge/bridges/app"
	"github.com/agentbridge/agentbridge/cmd/bridge/internal/cli"
	"github.com/agentbridge/agentbridge/config"
)

// defaultConfigPath is -config's default, the same for every command.
const defaultConfigPath = cli.DefaultConfigPath

// runFlags are the flags of `bridge run`.
type runFlags struct {
	config   string // -config
	explicit bool   // -config was given
	demo     bool   // -demo
	// cpuProfile is -cpuprofile: write a CPU profile of the whole run
	// there (go tool pprof), for measuring the bridge's own cost.
	cpuProfile string
}

// parseRunFlags parses `bridge run`'s arguments; every problem is a usage
// error.
func parseRunFlags(args []string, stderr io.Writer) (runFlags, error) {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var rf runFlags
	fs.StringVar(&rf.config, "config", defaultConfigPath, "path of the YAML config file")
	fs.BoolVar(&rf.demo, "demo", false,
		"demo mode: agents use the bridge's built-in scripted model instead of Claude (no credentials, no network); only web bots run")
	fs.StringVar(&rf.cpuProfile, "cpuprofile", "", "write a CPU profile of the run to this file (for `go tool pprof`)")
	if err := fs.Parse(args); err != nil {
		return rf, usageError{err}
	}
	if fs.NArg() > 0 {
		return rf, usagef("unexpected arguments: %v", fs.Args())
	}
	fs.Visit(func(f *flag.Flag) { rf.explicit = rf.explicit || f.Name == "config" })
	return rf, nil
}

// loadRunConfig loads the config `bridge run` uses. In demo mode without
// -config and without ./bridge.yaml it is the built-in minimal config
// (config.Minimal, relative paths against the working directory), and
// builtin is true. Every problem is a usage error.
func loadRunConfig(rf runFlags, lookupEnv func(string) (string, bool)) (cfg *config.Config, builtin bool, err error) {
	cfg, err = app.LoadConfig(rf.config, lookupEnv)
	if err != nil && rf.demo && !rf.explicit && errors.Is(err, fs.ErrNotExist) {
		cfg, err = config.Parse(config.Minimal(), defaultConfigPath, lookupEnv, app.ConfigPlatforms())
		if err != nil {
			return nil, false, usageError{fmt.Errorf("built-in minimal config: %w", err)}
		}
		return cfg, true, nil
	}
	if err != nil {
		return nil, false, usageError{err}
	}
	return cfg, false, nil
}
