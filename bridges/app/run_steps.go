package app

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	agentpool "github.com/agentbridge/agentbridge/agent/pool"
	"github.com/agentbridge/agentbridge/agent/sandbox"
	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/adapters/web"
	"github.com/agentbridge/agentbridge/bridges/app/assemble"
	"github.com/agentbridge/agentbridge/bridges/app/healthz"
	"github.com/agentbridge/agentbridge/bridges/core"
	"github.com/agentbridge/agentbridge/bridges/core/access"
	"github.com/agentbridge/agentbridge/bridges/core/agents"
	"github.com/agentbridge/agentbridge/bridges/core/metrics"
	"github.com/agentbridge/agentbridge/bridges/features/handoff"
	"github.com/agentbridge/agentbridge/bridges/features/uploads"
	"github.com/agentbridge/agentbridge/bridges/features/worktree"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/store"
)

// cleanups is the bridge's shutdown order: each start-up step adds the
// clean-up of what it opened, and run calls them last first, as
// deferred calls would. Not safe for concurrent use.
type cleanups []func()

// add appends f, to run before every clean-up added so far.
func (c *cleanups) add(f func()) { *c = append(*c, f) }

// run calls the clean-ups last first. Its receiver is a pointer so that
// `defer r.done.run()`, evaluated while the list is still empty, runs the
// clean-ups added after it.
func (c *cleanups) run() {
	for i := len(*c) - 1; i >= 0; i-- {
		(*c)[i]()
	}
}

// bridgeRun is one run of the bridge (Run): what each start-up step
// opens for the steps after it, and the clean-ups that stop it all in
// order. Each step sets its fields; a step reads only the fields of the
// steps before it.
type bridgeRun struct {
	o       Options
	cfg     *config.Config
	builtin bool // no config file: the built-in minimal config
	logger  *slog.Logger
	done    cleanups // Run runs them when it returns

	platforms map[string]bridges.Platform // openBots
	bots      *botSet
	st        *store.Store // openStorage
	reps      *replicas    // nil for one bridge
	gatherer  *prometheus.Registry
	reg       prometheus.Registerer // containAgents
	contain   *containment
	confined  agents.Containment
	cgroups   *sandbox.Cgroups
	limits    map[string]string
	console   *web.Console // buildCore; nil without a web bot
	live      *config.Live
	core      *core.Core
	handoffs  *handoff.Server
	access    *access.Authority // buildCore: who may act on a conversation now
	reloads   *reloader         // prepareReloads
	replicas  *replicaConfigs   // nil with the built-in config
	// retentionChanged tells the pruner a reload changed the retention.
	retentionChanged chan struct{}
}

// openBots opens each bot's platform adapter (bots.go); a bot that
// cannot open is a ConfigError.
func (r *bridgeRun) openBots(ctx context.Context) error {
	platforms, bots, err := buildPlatforms(ctx, r.cfg, r.logger) // bots.go
	if err != nil {
		return ConfigError{err}
	}
	r.platforms, r.bots = platforms, bots
	r.done.add(bots.close)
	return nil
}

// openStorage opens the store and the replicas (config replicas); a
// single bridge holds the database alone.
func (r *bridgeRun) openStorage(ctx context.Context) error {
	cfg, logger := r.cfg, r.logger
	st, err := OpenStore(ctx, cfg, logger) // SQLite in data_dir, or PostgreSQL
	if err != nil {
		return fmt.Errorf("open store: %w", err)
	}
	r.st = st
	r.done.add(func() { st.Close() })
	reps, err := newReplicas(cfg, st, logger) // replicas.go: nil for one bridge
	if err != nil {
		return err
	}
	r.reps = reps
	if reps == nil {
		owner, err := HoldStore(ctx, st)
		if err != nil {
			return err
		}
		r.done.add(func() {
			if err := owner.Release(); err != nil {
				logger.Warn("release the database", "err", err)
			}
		})
	}
	return nil
}

// containAgents builds the agents' sandboxes and networks (egress.go),
// checked before anything else starts, and their resource limits
// (limits.go). Both are removed after the agents stopped: their
// clean-ups are added before the pool's.
func (r *bridgeRun) containAgents(ctx context.Context) error {
	cfg, logger := r.cfg, r.logger
	gatherer := prometheus.NewRegistry()
	reg := r.reps.registerer(gatherer) // labelled by replica with config replicas
	r.gatherer, r.reg = gatherer, reg
	contain := newContainment(reg, logger)
	r.contain = contain
	r.done.add(contain.close)
	confined, err := contain.build(ctx, cfg)
	if err != nil {
		return err
	}
	r.confined = confined
	cgroups, limits := openLimits(cfg, logger)
	r.cgroups, r.limits = cgroups, limits
	r.done.add(func() {
		if err := cgroups.Close(); err != nil {
			logger.Warn("remove agent cgroups", "err", err)
		}
	})
	return nil
}

// leaseConnections makes one replica at a time hold each Discord gateway
// and WhatsApp device with replicas (connleases.go); without replicas,
// no lease.
func (r *bridgeRun) leaseConnections() error {
	cfg := r.cfg
	return r.bots.leaseConnections(cfg, r.platforms, r.st, replicaConns{enabled: cfg.Replicas.Enabled, id: r.reps.id(), lease: cfg.Replicas.Lease})
}

// buildCore builds the web console, the config in force, the agent pool,
// the metrics and the core with its features, and the terminal hand-off
// server. The pool's clean-up stops the agents within ShutdownGrace
// (ctx's values, not its end) and waits for the core's session readers.
func (r *bridgeRun) buildCore(ctx context.Context) error {
	cfg, st, logger, reg, reps := r.cfg, r.st, r.logger, r.reg, r.reps
	sandboxes := r.confined.Sandboxes
	live := config.NewLive(cfg, time.Now()) // the one config in force; reloads replace it (reload.go)
	r.live = live
	// The one decision of who may act on a conversation now, shared by
	// the console, the hand-off server and the core (bridges/core/access).
	decide := access.New(live, st)
	r.access = decide
	console, err := newWebConsole(cfg, st, logger, r.o.Demo, decide)
	if err != nil {
		return err
	}
	r.console = console
	if b := cfg.WebBot(); b != nil {
		r.platforms[b.Name] = console
	}
	pool := agentpool.New(logger)
	r.done.add(func() {
		stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ShutdownGrace)
		defer cancel()
		if err := pool.Close(stopCtx); err != nil {
			logger.Warn("stop agents", "err", err)
		}
		if r.core != nil {
			r.core.WaitSessionReaders() // the agents' event channels are closed now
		}
	})

	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	agentPool := agents.NewPool(pool)
	reg.MustRegister(agents.NewPoolCollector(agentPool, slices.Sorted(maps.Keys(cfg.Agents))))
	healthz.RegisterStorageMetrics(reg, st.WriteHealth)
	counters := metrics.New(reg)
	stt, err := transcriber(cfg.Transcription)
	if err != nil {
		return err
	}
	relay, err := bridgeExecutable() // the relay of the bridge's tools for ACP agents (agent/mcprelay)
	if err != nil {
		logger.Warn("agents of kind acp get no bridge tools: the bridge's own binary is not found", "err", err)
		relay = ""
	}
	hub := handoff.NewHub() // terminals attached with bridge attach see conversations through it
	// The core with its features: spend, schedules and agent tools
	// (bridges/app/assemble), worktrees, transcription and hand-off (its
	// terminals' hub and its !handoff command) here.
	bridgeCore := assemble.Core(core.CoreOptions{
		Config: live, Store: st, Pool: agentPool, Logger: logger, Metrics: counters,
		Spawner: agents.Spawner{Containment: r.confined, Cgroups: r.cgroups, Worktrees: worktree.New(cfg, sandboxes, logger), MCPRelay: relay, TempRoot: r.o.TempRoot},
		Files:   uploads.New(stt), Observer: hub, Ownership: reps.ownership(), Access: decide,
	}, reps.claimFiring(), handoff.Command())
	r.core = bridgeCore
	r.handoffs = handoff.NewServer(handoff.Options{Config: live, Store: st, Core: bridgeCore, Hub: hub, Logger: logger, Access: decide})

	reg.MustRegister(core.NewOutboxCollector(bridgeCore)) // replies waiting out an outage
	return nil
}

// prepareReloads builds the config reloader (reload.go), shows its
// status in the web console, and, with a config file, records the file
// each replica runs (replica_config.go).
func (r *bridgeRun) prepareReloads() {
	cfg, st, logger, live, console, reps := r.cfg, r.st, r.logger, r.live, r.console, r.reps
	bridgeCore := r.core
	retentionChanged := make(chan struct{}, 1)
	r.retentionChanged = retentionChanged
	reloads := &reloader{path: cfg.Path, lookupEnv: r.o.LookupEnv, force: r.o.ForceSignal, live: live, core: bridgeCore, console: console, access: r.access,
		bots: r.bots, contain: r.contain, st: st, log: logger, now: time.Now, retention: func() {
			select {
			case retentionChanged <- struct{}{}:
			default:
			}
		}}
	reloads.adjust = r.o.Adjust
	r.reloads = reloads
	if console != nil {
		console.SetOperator(bridgeCore)
		console.SetConfigStatus(reloads.status)
		console.SetReplicas(reps.operatorView(st)) // replicas.go: nil for one bridge
	}

	var replicas *replicaConfigs // the config file each process on this database runs (replica_config.go)
	if !r.builtin {
		replicas = &replicaConfigs{id: reps.id(), st: st, log: logger, now: time.Now}
		replicas.set(fileSum(cfg.Path), live.Generation())
		reloads.replicas = replicas
	}
	r.replicas = replicas
}
