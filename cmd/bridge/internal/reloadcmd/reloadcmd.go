// Package reloadcmd holds `bridge reload`: it makes the bridge running on
// a config's data_dir reload its config file, and owns the signals that
// ask for it (the running bridge's reloader listens for them).
package reloadcmd

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/agentbridge/agentbridge/bridges/adapters/web"
	"github.com/agentbridge/agentbridge/bridges/app/healthz"
	"github.com/agentbridge/agentbridge/cmd/bridge/internal/cli"
	"github.com/agentbridge/agentbridge/internal/dirlock"
)

// The signals a running bridge reloads its config on: Signal (SIGHUP:
// systemctl reload, `bridge reload`), and ForceSignal (SIGUSR1: `bridge
// reload -now`): the same, but agents of changed profiles are replaced at
// their next moment without a turn even while a background task runs.
const (
	Signal      = syscall.SIGHUP
	ForceSignal = syscall.SIGUSR1
)

// reloadWait bounds how long `bridge reload` waits for the running
// bridge to report the outcome on /healthz.
const reloadWait = 30 * time.Second

// Run runs `bridge reload [-config FILE] [-now]`: it asks the bridge running on the config's data_dir to reload
// its config file: it validates the file first (the messages of
// check-config; an invalid file is not sent), signals the pid in
// data_dir/bridge.lock (SIGHUP, or SIGUSR1 with -now) and, when the
// bridge has an HTTP listener, waits for /healthz to show the new
// generation or the refusal. Signalling needs the bridge's Unix user (or
// root): that is the authentication, and no token crosses the wire.
func Run(ctx context.Context, args []string, env cli.Env) error {
	fs := flag.NewFlagSet("reload", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	path := fs.String("config", cli.DefaultConfigPath, "path of the YAML config file the running bridge was started with")
	now := fs.Bool("now", false, "replace agents of changed profiles at once, even while a background task runs (never mid-turn)")
	if err := fs.Parse(args); err != nil {
		return cli.UsageError{Err: err}
	}
	if fs.NArg() > 0 {
		return cli.Usagef("unexpected arguments: %v", fs.Args())
	}
	cfg, err := env.Load(*path)
	if err != nil {
		return cli.UsageError{Err: fmt.Errorf("not reloaded (the running bridge keeps its config):\n%w", err)}
	}
	pid, err := runningBridge(cfg.DataDir)
	if err != nil {
		return err
	}
	before, _ := healthConfigOf(ctx, cfg.HTTP.Listen)
	sig, what := Signal, "SIGHUP"
	if *now {
		sig, what = ForceSignal, "SIGUSR1 (-now)"
	}
	started := time.Now()
	if err := syscall.Kill(pid, sig); err != nil {
		return fmt.Errorf("signal the bridge (pid %d): %w", pid, err)
	}
	if cfg.HTTP.Listen == "" || before == nil {
		fmt.Fprintf(env.Stdout, "Sent %s to the bridge (pid %d); its log says whether the config was applied.\n", what, pid)
		return nil
	}
	return waitReloaded(ctx, env.Stdout, cfg.HTTP.Listen, *before, started)
}

// runningBridge returns the pid of the bridge that holds dataDir's lock.
func runningBridge(dataDir string) (int, error) {
	if _, err := os.Stat(filepath.Join(dataDir, dirlock.FileName)); err != nil {
		return 0, fmt.Errorf("no bridge runs on data_dir %s (no %s): start it with bridge run", dataDir, dirlock.FileName)
	}
	l, err := dirlock.Acquire(dataDir)
	var held *dirlock.HeldError
	switch {
	case err == nil:
		if rerr := l.Release(); rerr != nil {
			return 0, rerr
		}
		return 0, fmt.Errorf("no bridge runs on data_dir %s: start it with bridge run", dataDir)
	case errors.As(err, &held) && held.PID > 0:
		return held.PID, nil
	case errors.As(err, &held):
		return 0, fmt.Errorf("a bridge runs on data_dir %s but its pid could not be read from %s", dataDir, dirlock.FileName)
	default:
		return 0, fmt.Errorf("find the running bridge: %w", err)
	}
}

// waitReloaded polls /healthz until it shows a generation newer than
// before's, a refusal newer than started, or — the file already in force,
// e.g. applied by the bridge's own file watch a moment earlier — a read
// of the file newer than started that changed nothing, and reports it.
func waitReloaded(ctx context.Context, stdout io.Writer, listen string, before healthz.Config, started time.Time) error {
	ctx, cancel := context.WithTimeout(ctx, reloadWait)
	defer cancel()
	for {
		cur, err := healthConfigOf(ctx, listen)
		switch {
		case err != nil:
		case cur.Generation > before.Generation:
			fmt.Fprintf(stdout, "Config reloaded: generation %d in force since %s.\n", cur.Generation, cur.Since.Format(time.RFC3339))
			return nil
		case len(cur.Refused) > 0 && !cur.RefusedAt.Before(started.Truncate(time.Millisecond)):
			return fmt.Errorf("the bridge refused the config; generation %d stays in force:\n%s", cur.Generation, strings.Join(cur.Refused, "\n"))
		case !cur.CheckedAt.Before(started.Truncate(time.Millisecond)):
			fmt.Fprintf(stdout, "Config unchanged: the file says what runs, generation %d in force since %s.\n", cur.Generation, cur.Since.Format(time.RFC3339))
			return nil
		}
		select {
		case <-ctx.Done():
			fmt.Fprintf(stdout, "Signal sent; no new generation after %v: the file may be unchanged (the bridge's log says).\n", reloadWait)
			return nil
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// healthConfigOf reads the config part of the bridge's /healthz
// (bridges/app/healthz writes it).
func healthConfigOf(ctx context.Context, listen string) (*healthz.Config, error) {
	if listen == "" {
		return nil, errors.New("no http.listen")
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, web.ConsoleURL(listen)+"/healthz", nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var body struct {
		Config *healthz.Config `json:"config"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return nil, fmt.Errorf("read /healthz: %w", err)
	}
	if body.Config == nil {
		return nil, errors.New("/healthz has no config section")
	}
	return body.Config, nil
}
