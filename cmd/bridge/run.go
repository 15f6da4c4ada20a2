package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	agentpool "github.com/agentbridge/agentbridge/agent/pool"
	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/agenttools"
	"github.com/agentbridge/agentbridge/bridges/core"
	"github.com/agentbridge/agentbridge/bridges/handoff"
	"github.com/agentbridge/agentbridge/bridges/schedule"
	"github.com/agentbridge/agentbridge/bridges/sessiondir"
	"github.com/agentbridge/agentbridge/bridges/spend"
	"github.com/agentbridge/agentbridge/bridges/web"
	"github.com/agentbridge/agentbridge/bridges/worktree"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/store"
)

// shutdownGrace bounds the graceful stop of agents and the HTTP server.
const shutdownGrace = 30 * time.Second

func cmdRun(ctx context.Context, args []string, stderr io.Writer, lookupEnv func(string) (string, bool)) error {
	rf, err := parseRunFlags(args, stderr)
	if err != nil {
		return err
	}
	// From the start, so that a reload signal during start-up does not
	// kill the bridge (SIGHUP's default); it is handled once the core runs.
	reloadSigs := make(chan os.Signal, 1)
	signal.Notify(reloadSigs, reloadSignal, forceSignal)
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
	logger := newLogger(cfg.Log, stderr)
	if err := hardenProcess(); err != nil {
		logger.Warn("could not make the bridge process non-dumpable", "err", err)
	}
	if builtin {
		logger.Info("no config file: demo mode uses the built-in minimal config (bridge example-config -minimal)",
			"path", rf.config, "data_dir", cfg.DataDir)
	}
	lock, err := lockDataDir(cfg.DataDir) // owner.go: before anything in data_dir is opened
	if err != nil {
		return err
	}
	defer func() {
		if err := lock.Release(); err != nil {
			logger.Warn("release data_dir lock", "err", err)
		}
	}()
	if rf.demo {
		model, err := startDemo(cfg, logger)
		if err != nil {
			return err
		}
		defer model.Close() // deferred first: closes after the agents stopped
	}

	platforms, bots, err := buildPlatforms(ctx, cfg, logger) // bots.go
	if err != nil {
		return usageError{err}
	}
	defer bots.close()
	st, err := openStore(ctx, cfg, logger) // store.go: SQLite in data_dir, or PostgreSQL
	if err != nil {
		return fmt.Errorf("open store: %w", err)
	}
	defer st.Close()
	reps, err := newReplicas(cfg, st, logger) // replicas.go: nil for one bridge
	if err != nil {
		return err
	}
	if reps == nil {
		owner, err := holdStore(ctx, st)
		if err != nil {
			return err
		}
		defer func() {
			if err := owner.Release(); err != nil {
				logger.Warn("release the database", "err", err)
			}
		}()
	}

	// The agents' sandboxes and networks (egress.go), checked before
	// anything else starts; the egress proxy closes after the agents
	// stopped (deferred calls run last first).
	gatherer := prometheus.NewRegistry()
	reg := reps.registerer(gatherer) // labelled by replica with config replicas
	contain := newContainment(reg, logger)
	defer contain.close()
	confined, err := contain.build(ctx, cfg)
	if err != nil {
		return err
	}
	sandboxes := confined.Sandboxes
	// Resource limits (limits.go); the cgroups go after the agents stopped
	// (deferred before the pool's Close).
	cgroups, limits := openLimits(cfg, logger)
	defer func() {
		if err := cgroups.Close(); err != nil {
			logger.Warn("remove agent cgroups", "err", err)
		}
	}()

	// With replicas, one replica at a time holds each Discord gateway
	// and WhatsApp device (connleases.go); without replicas, no lease.
	if err := bots.leaseConnections(cfg, platforms, st, replicaConns{enabled: cfg.Replicas.Enabled, id: reps.id(), lease: cfg.Replicas.Lease}); err != nil {
		return err
	}

	console, err := newWebConsole(cfg, st, logger, rf.demo)
	if err != nil {
		return err
	}
	if b := cfg.WebBot(); b != nil {
		platforms[b.Name] = console
	}

	live := config.NewLive(cfg, time.Now()) // the one config in force; reloads replace it (reload.go)
	pool := agentpool.New(logger)
	var bridgeCore *core.Core
	defer func() {
		stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownGrace)
		defer cancel()
		if err := pool.Close(stopCtx); err != nil {
			logger.Warn("stop agents", "err", err)
		}
		if bridgeCore != nil {
			bridgeCore.WaitSessionReaders() // the agents' event channels are closed now
		}
	}()

	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	agents := core.NewAgentPool(pool)
	reg.MustRegister(core.NewPoolCollector(agents, slices.Sorted(maps.Keys(cfg.Agents))))
	registerStorageMetrics(reg, st.WriteHealth)
	metrics := core.NewMetrics(reg)
	stt, err := transcriber(cfg.Transcription)
	if err != nil {
		return err
	}
	hub := handoff.NewHub() // terminals attached with bridge attach see conversations through it
	bridgeCore = core.NewCore(core.CoreOptions{
		Config: live, Store: st, Pool: agents, Logger: logger,
		Metrics: metrics, Sandboxes: sandboxes, Networks: confined.Networks, Cgroups: cgroups,
		Worktrees: worktree.New(cfg, sandboxes, logger), Spend: spend.New(live, st, metrics),
		Scheduler: schedule.New(schedule.Options{Config: live, Store: st, Logger: logger, Metrics: metrics,
			Claim: reps.claimFiring()}),
		Tools: agenttools.New, Transcriber: stt, Observer: hub, Ownership: reps.ownership(),
	})
	handoffs := handoff.NewServer(handoff.Options{Config: live, Store: st, Core: bridgeCore, Hub: hub, Logger: logger})

	reg.MustRegister(core.NewOutboxCollector(bridgeCore)) // replies waiting out an outage
	retentionChanged := make(chan struct{}, 1)
	reloads := &reloader{path: cfg.Path, lookupEnv: lookupEnv, live: live, core: bridgeCore, console: console,
		bots: bots, contain: contain, st: st, log: logger, now: time.Now, retention: func() {
			select {
			case retentionChanged <- struct{}{}:
			default:
			}
		}}
	if console != nil {
		console.SetOperator(bridgeCore)
		console.SetConfigStatus(reloads.status)
		console.SetReplicas(reps.operatorView(st)) // replicas.go: nil for one bridge
	}

	var replicas *replicaConfigs // the config file each process on this database runs (replica_config.go)
	if !builtin {
		replicas = &replicaConfigs{id: reps.id(), st: st, log: logger, now: time.Now}
		replicas.set(fileSum(cfg.Path), live.Generation())
		reloads.replicas = replicas
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	httpDone := make(chan error, 1)
	if cfg.HTTP.Listen != "" {
		srv, ln, err := listenHTTP(cfg.HTTP.Listen, gatherer, healthHandlerWith(bridgeCore.BotStates,
			healthSources{limits: limits, replies: bridgeCore.OutboxSummary, storage: st.WriteHealth, config: reloads.status,
				replica: reps.health(), replicas: replicasStatus(replicas)}), console, handoffs)
		if err != nil {
			return listenTaken(cfg.HTTP.Listen, cfg.Path, err)
		}
		logger.Info("http listening", "addr", ln.Addr().String())
		if console != nil {
			console.Announce(stderr)
		}
		go func() { httpDone <- serveHTTP(ctx, srv, ln) }()
	} else {
		httpDone <- nil
	}

	pruneDone := make(chan struct{})
	go func() {
		defer close(pruneDone)
		runPruner(ctx, live, retentionChanged, func(retention time.Duration) store.Pruner {
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
		if builtin {
			<-ctx.Done() // no file to reload
			return
		}
		reloads.watch(ctx, reloadSigs, filePoll) // reload_watch.go
	}()

	replicasDone := make(chan struct{})
	go func() {
		defer close(replicasDone)
		if replicas != nil {
			replicas.run(ctx, replicaBeat)
		}
	}()

	logger.Info("bridge starting", "bots", len(cfg.Bots), "version", version)
	coreCtx := reps.coreContext(ctx, bridgeCore, shutdownGrace) // replicas: a stop finishes running turns first
	reps.start(coreCtx, bridgeCore)
	runErr := bridgeCore.Run(coreCtx, platforms)
	cancel()
	reps.stop(ctx) // hands the leases over now that the core stopped
	<-watchDone
	<-replicasDone
	<-pruneDone // before the store closes
	httpErr := <-httpDone
	if runErr != nil && !errors.Is(runErr, context.Canceled) {
		return fmt.Errorf("bridge stopped: %w", runErr)
	}
	if httpErr != nil {
		return httpErr
	}
	logger.Info("bridge stopped")
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

func newLogger(c config.Log, w io.Writer) *slog.Logger {
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
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
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
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownGrace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("http shutdown: %w", err)
	}
	<-errc
	return nil
}
