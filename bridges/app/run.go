package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/adapters/web"
	"github.com/agentbridge/agentbridge/bridges/app/healthz"
	"github.com/agentbridge/agentbridge/bridges/core/sessiondir"
	"github.com/agentbridge/agentbridge/bridges/features/handoff"
	"github.com/agentbridge/agentbridge/bridges/features/worktree"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/store"
)

// ShutdownGrace bounds the graceful stop of agents and the HTTP server.
const ShutdownGrace = 30 * time.Second

// Options is what Run builds the bridge from. Config, Logger and
// LookupEnv are required; a nil Reloads never reloads on a signal.
type Options struct {
	// Config is the loaded, validated config (LoadConfig); its Path is
	// the file the reloader reads again.
	Config *config.Config
	// Builtin says Config is the built-in minimal config, not read from a
	// file: nothing is reloaded and no replica config is recorded.
	Builtin bool
	// Demo labels every page of the web console as a demo (bridge run
	// -demo).
	Demo bool
	// Adjust, when set, changes each reloaded config before it is
	// compared with the one in force (demo mode: its scripted model).
	Adjust func(*config.Config) error
	// Logger receives every log record of the bridge.
	Logger *slog.Logger
	// Stderr is where the web console announces its address.
	Stderr io.Writer
	// LookupEnv expands ${ENV} in reloaded config files (os.LookupEnv).
	LookupEnv func(string) (string, bool)
	// Reloads delivers the signals that reload the config file; a signal
	// equal to ForceSignal reloads with force (agents of changed profiles
	// are replaced even during a background task). The caller owns the
	// channel (signal.Notify) from before Run, so that a reload signal
	// during start-up does not kill the process.
	Reloads     <-chan os.Signal
	ForceSignal os.Signal
	// Version is logged when the bridge starts.
	Version string
	// TempRoot is where agents make their private TMPDIRs (the caller's
	// internal/tmproot.Root, removed after Run); "" = os.TempDir().
	TempRoot string
}

// ConfigError marks the errors of Run that come from the config (a bot
// that cannot open, a profile's sandbox or network settings): the
// command line treats them as usage errors.
type ConfigError struct{ Err error }

func (e ConfigError) Error() string { return e.Err.Error() }
func (e ConfigError) Unwrap() error { return e.Err }

// Run builds the bridge from o.Config and runs it until ctx ends or the
// core fails; it returns once everything it started has stopped. It
// starts in this order: the bots' adapters, the store and replicas, the
// agents' containment and limits, the connection leases, the core with
// its features, the config reloader, the HTTP listener and the background
// goroutines; then it runs the core. It stops in this order: the context
// ends, the replica's leases are handed over, the background goroutines
// and the HTTP server are waited for, then the clean-ups run last first:
// the agents (and their session readers), the cgroups, the containment
// (egress proxy), the database ownership, the store, the bots. What the
// process holds besides (the data_dir lock, a demo model, a CPU profile)
// is the caller's, to release after Run returned.
func Run(ctx context.Context, o Options) error {
	r := &bridgeRun{o: o, cfg: o.Config, builtin: o.Builtin, logger: o.Logger}
	defer r.done.run() // each step's clean-ups, last first (run_steps.go)
	if err := r.openBots(ctx); err != nil {
		return err
	}
	if err := r.openStorage(ctx); err != nil {
		return err
	}
	if err := r.containAgents(ctx); err != nil {
		return err
	}
	if err := r.leaseConnections(); err != nil {
		return err
	}
	if err := r.buildCore(ctx); err != nil {
		return err
	}
	r.prepareReloads()

	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // deferred last: runs before the clean-ups
	httpDone, err := r.listen(ctx)
	if err != nil {
		return err
	}
	bg := r.startBackground(ctx)
	runErr := r.runCore(ctx)
	cancel()
	return r.stop(ctx, bg, runErr, httpDone)
}

// listen starts the HTTP listener (config http.listen): /healthz,
// /metrics, the hand-off and the web console. The channel it returns
// receives the server's error once ctx ended (at once nil without a
// listener); the caller waits for it.
func (r *bridgeRun) listen(ctx context.Context) (<-chan error, error) {
	cfg, st, logger, console, bridgeCore := r.cfg, r.st, r.logger, r.console, r.core
	httpDone := make(chan error, 1)
	if cfg.HTTP.Listen != "" {
		srv, ln, err := listenHTTP(cfg.HTTP.Listen, r.gatherer, healthz.Handler(bridgeCore.BotStates,
			healthz.Sources{Limits: r.limits, Replies: bridgeCore.OutboxSummary, Storage: st.WriteHealth, Config: r.reloads.status,
				Replica: r.reps.health(), Replicas: replicasStatus(r.replicas)}), console, r.handoffs)
		if err != nil {
			return nil, listenTaken(cfg.HTTP.Listen, cfg.Path, err)
		}
		logger.Info("http listening", "addr", ln.Addr().String())
		if console != nil {
			console.Announce(r.o.Stderr)
		}
		go func() { httpDone <- serveHTTP(ctx, srv, ln) }()
	} else {
		httpDone <- nil
	}
	return httpDone, nil
}

// background is what runs beside the core until ctx ends; each channel
// closes when its goroutine returned.
type background struct {
	prune    <-chan struct{} // the pruner (prune.go)
	watch    <-chan struct{} // the config reloader's watch (reload_watch.go)
	replicas <-chan struct{} // this replica's config record (replica_config.go)
}

// startBackground starts the pruner, the config watch and the replica
// config heartbeat, each until ctx ends; the caller waits for them.
func (r *bridgeRun) startBackground(ctx context.Context) background {
	cfg, st, logger, live, reloads, replicas := r.cfg, r.st, r.logger, r.live, r.reloads, r.replicas
	sandboxes := r.confined.Sandboxes
	pruneDone := make(chan struct{})
	go func() {
		defer close(pruneDone)
		runPruner(ctx, live, r.retentionChanged, func(retention time.Duration) store.Pruner {
			return store.Pruner{Store: st, Retention: retention, Logger: logger,
				Also: func(ctx context.Context, before time.Time) error {
					_, err := sessiondir.Prune(ctx, st, cfg.DataDir, before, logger)
					_, werr := worktree.Prune(ctx, st, live.Current(), sandboxes, before, logger)
					return errors.Join(err, werr)
				}}
		})
	}()

	watchDone := make(chan struct{})
	go func() {
		defer close(watchDone)
		if r.builtin {
			<-ctx.Done() // no file to reload
			return
		}
		reloads.watch(ctx, r.o.Reloads, filePoll) // reload_watch.go
	}()

	replicasDone := make(chan struct{})
	go func() {
		defer close(replicasDone)
		if replicas != nil {
			replicas.run(ctx, replicaBeat)
		}
	}()
	return background{prune: pruneDone, watch: watchDone, replicas: replicasDone}
}

// runCore starts the replica's leases and runs the core on the platforms
// until ctx ends or the core fails.
func (r *bridgeRun) runCore(ctx context.Context) error {
	r.logger.Info("bridge starting", "bots", len(r.cfg.Bots), "version", r.o.Version)
	coreCtx := r.reps.coreContext(ctx, r.core, ShutdownGrace) // replicas: a stop finishes running turns first
	r.reps.start(coreCtx, r.core)
	r.reps.fanOutWeb(coreCtx, r.console, r.st) // replicas.go: the web pages of every replica follow this one's answers
	return r.core.Run(coreCtx, r.platforms)
}

// stop, once ctx ended and the core stopped with runErr, hands the
// replica's leases over and waits for the background goroutines (the
// pruner before the store closes) and the HTTP server; Run's
// clean-ups then stop the rest.
func (r *bridgeRun) stop(ctx context.Context, bg background, runErr error, httpDone <-chan error) error {
	r.reps.stop(ctx) // hands the leases over now that the core stopped
	<-bg.watch
	<-bg.replicas
	<-bg.prune // before the store closes
	httpErr := <-httpDone
	if runErr != nil && !errors.Is(runErr, context.Canceled) {
		return fmt.Errorf("bridge stopped: %w", runErr)
	}
	if httpErr != nil {
		return httpErr
	}
	r.logger.Info("bridge stopped")
	return nil
}

// openTimeout bounds opening one bot's adapter at start (a WhatsApp bot
// opens and checks its device store).
const openTimeout = 10 * time.Second

// openBot opens bot with list[i] (i < 0: the platform is not in this
// build), within openTimeout.
func openBot(ctx context.Context, list []platform, i int, cfg *config.Config, b *config.Bot, logger *slog.Logger) (bridges.Platform, func() error, error) {
	if i < 0 {
		return nil, nil, fmt.Errorf("platform %q is not available in this build", b.Platform)
	}
	ctx, cancel := context.WithTimeout(ctx, openTimeout)
	defer cancel()
	return list[i].open(ctx, cfg, b, logger)
}

// NewLogger makes the logger config log asks for (level, text or JSON),
// writing to w.
func NewLogger(c config.Log, w io.Writer) *slog.Logger {
	var level slog.Level
	_ = level.UnmarshalText([]byte(c.Level)) // validated by config; default info
	opts := &slog.HandlerOptions{Level: level}
	if c.Format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// listenHTTP serves /healthz, /metrics, the terminal hand-off under
// handoff.Prefix and, when console is not nil, the web console at every
// other path.
func listenHTTP(addr string, reg *prometheus.Registry, health http.Handler, console *web.Console, handoffs *handoff.Server) (*http.Server, net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, nil, fmt.Errorf("http listen %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /healthz", health)
	// Uncompressed: the text is small, and a gzip writer costs about 1 MB
	// of compressor state per scrape.
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{DisableCompression: true}))
	mux.Handle(handoff.Prefix, handoffs.Handler())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	srv.RegisterOnShutdown(handoffs.Shutdown) // ends attached terminals' streams
	if console != nil {
		mux.Handle("/", console.Handler())
		srv.RegisterOnShutdown(console.Shutdown) // ends its event streams
	}
	return srv, ln, nil
}

// serveHTTP serves until ctx ends, then shuts the server down gracefully.
func serveHTTP(ctx context.Context, srv *http.Server, ln net.Listener) error {
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("http server: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ShutdownGrace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("http shutdown: %w", err)
	}
	<-errc
	return nil
}
