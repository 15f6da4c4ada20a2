package main

import (
	"context"
	"io"
	"os"
	"os/signal"

	"github.com/agentbridge/agentbridge/bridges/app"
	"github.com/agentbridge/agentbridge/cmd/bridge/internal/demo"
	"github.com/agentbridge/agentbridge/cmd/bridge/internal/harden"
	"github.com/agentbridge/agentbridge/cmd/bridge/internal/reloadcmd"
	"github.com/agentbridge/agentbridge/cmd/bridge/internal/storecmd"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/internal/tmproot"
)

// cmdRun runs the bridge until ctx ends or the core fails. It prepares
// the process — the CPU profile (flag -cpuprofile), the logger, the
// process hardening, the data_dir lock (before anything in data_dir is
// opened), the agents' temporary root (internal/tmproot) and, in demo
// mode, the scripted model — then builds and runs
// the bridge (app.Run), and releases those in the reverse order once
// app.Run has stopped everything it started.
func cmdRun(ctx context.Context, args []string, stderr io.Writer, lookupEnv func(string) (string, bool)) error {
	rf, err := parseRunFlags(args, stderr)
	if err != nil {
		return err
	}
	// From the start, so that a reload signal during start-up does not
	// kill the bridge (SIGHUP's default); it is handled once the core runs.
	reloadSigs := make(chan os.Signal, 1)
	signal.Notify(reloadSigs, reloadcmd.Signal, reloadcmd.ForceSignal)
	defer signal.Stop(reloadSigs)
	cfg, builtin, err := loadRunConfig(rf, lookupEnv)
	if err != nil {
		return err
	}
	if rf.cpuProfile != "" {
		stop, err := startCPUProfile(rf.cpuProfile)
		if err != nil {
			return err
		}
		defer stop()
	}
	logger := app.NewLogger(cfg.Log, stderr)
	if err := harden.Process(); err != nil {
		logger.Warn("could not make the bridge process non-dumpable", "err", err)
	}
	if builtin {
		logger.Info("no config file: demo mode uses the built-in minimal config (bridge example-config -minimal)",
			"path", rf.config, "data_dir", cfg.DataDir)
	}
	lock, err := storecmd.LockDataDir(cfg.DataDir) // before anything in data_dir is opened
	if err != nil {
		return err
	}
	defer func() {
		if err := lock.Release(); err != nil {
			logger.Warn("release data_dir lock", "err", err)
		}
	}()
	tempRoot := ""
	if tmp, err := tmproot.Open(cfg.DataDir, "", logger); err != nil { // removes the one a killed bridge left
		// Profiles may set their agents' TMPDIR themselves: a warning, and
		// the others make theirs in the system's temporary directory.
		logger.Warn("agents' temporary directories are made without a root this bridge removes after a kill", "err", err)
	} else {
		tempRoot = tmp.Dir()
		defer func() { // after app.Run stopped the agents, before the lock is released
			if err := tmp.Close(); err != nil {
				logger.Warn("agents' temporary files", "err", err)
			}
		}()
	}
	o := app.Options{Config: cfg, Builtin: builtin, Demo: rf.demo, Logger: logger, Stderr: stderr, LookupEnv: lookupEnv,
		Reloads: reloadSigs, ForceSignal: reloadcmd.ForceSignal, Version: version, TempRoot: tempRoot}
	if rf.demo {
		model, err := demo.Start(cfg, logger)
		if err != nil {
			return err
		}
		defer model.Close() // after app.Run stopped the agents
		// Every config, also reloaded, points agents at the scripted model.
		o.Adjust = func(c *config.Config) error { return demo.Apply(c, model, logger) }
	}
	return app.Run(ctx, o)
}
