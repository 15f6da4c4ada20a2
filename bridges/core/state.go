package core

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core/access"
	"github.com/agentbridge/agentbridge/bridges/core/agents"
	"github.com/agentbridge/agentbridge/bridges/core/connstate"
	"github.com/agentbridge/agentbridge/bridges/core/delivery"
	"github.com/agentbridge/agentbridge/bridges/core/metrics"
	"github.com/agentbridge/agentbridge/bridges/core/ownership"
	"github.com/agentbridge/agentbridge/bridges/core/worker"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/internal/tasks"
	"github.com/agentbridge/agentbridge/store"
)

// This file holds the state of the core (Core, CoreOptions, the bots'
// runs, what start-up recovers, Swapped): the types every other file
// works on. A conversation's worker keeps its own (bridges/core/worker).

// CoreOptions configure the conversation core.
type CoreOptions struct {
	// Config is the config in force (required: bots, agent profiles,
	// access lists): a *config.Config, or a *config.Live that Reload
	// replaces. The core reads it at each decision (Core.cfg).
	Config config.Source
	Store  *store.Store // required: conversations, ledger, outbox, audit, usage
	Pool   agents.Pool  // required: agent processes (agents.NewPool over *pool.Pool)
	Logger *slog.Logger // default discards
	// Clock is the source of time and timers; default the real clock.
	Clock worker.Clock
	// QueueCapacity bounds each conversation's input queue; default
	// DefaultQueueCapacity. A message that finds the queue full stays
	// pending in the ledger and is delivered with the next input.
	QueueCapacity int
	// OutboxBackoff is the first delay before re-posting a reply that failed;
	// it doubles per attempt up to a minute. Default DefaultOutboxBackoff.
	OutboxBackoff time.Duration
	// SlowHandler is how long one input may take before it is logged as
	// slow; default queue.DefaultSlowAfter.
	SlowHandler time.Duration
	// RetireIdleAfter stops the worker of a conversation that has had no
	// agent process, open card, unfinished message or unposted reply for
	// this long; its next message starts a new worker. Default
	// DefaultRetireIdleAfter.
	RetireIdleAfter time.Duration
	// Metrics, when set, counts messages, results, approvals, agent exits
	// and failed posts (metrics.New: a nil *metrics.Metrics records
	// nothing).
	Metrics *metrics.Metrics
	// Spawner is how each profile's agents are spawned (agents.Spawner):
	// their containment, by profile name, which SetContainment replaces
	// (Run refuses to start when a profile whose config names a sandbox
	// other than "none" has none, or a bwrap profile's network mode, proxy
	// or none, has no matching network: agents are never silently
	// unconfined, never silently share the host's network); the cgroups
	// that enforce their resources (nil enforces none); and the worktree
	// hook that gives the sessions of profiles with worktree: true a git
	// worktree each (bridges/features/worktree.New; nil: every agent works
	// in its profile's workdir).
	Spawner agents.Spawner
	// Tools are the bridge's MCP tools for each agent process, the
	// features' registered ones included (bridges/features/agenttools.New); nil
	// gives the agents no bridge tools.
	Tools worker.AgentTools
	// Commands runs a person's messages that are chat commands
	// (bridges/features/commands' Table: the built-in commands and those features
	// register, e.g. bridges/features/schedule's !schedule); nil: no message is a
	// command, every one goes to the agent.
	Commands worker.Commands
	// Cards makes each conversation's cards (bridges/features/cards' Feature): the
	// permission, plan, question, elicitation and approval cards, the
	// "Always allow" grants and !rules. nil fails closed: every permission
	// request is denied with a notice, elicitations are declined.
	Cards worker.Cards
	// Scheduler fires the stored schedules (bridges/features/schedule's Feature);
	// without one nothing fires, and Run refuses a config that has
	// schedules.
	Scheduler Scheduler
	// Spend enforces the spend limits (bridges/features/spend.New); Run refuses to
	// start without it when the config has limits: limits never silently off.
	Spend worker.SpendGate
	// Files turns the files of people's messages into what the agent gets
	// (bridges/features/uploads.New, with the transcriber of voice notes); Run
	// refuses to start when the config has transcription and Files do not
	// transcribe. nil: the agent gets the text of a message only.
	Files worker.Files
	// Observer, when set, sees each conversation's agent events, notices
	// and cards (bridges/features/handoff's attached terminals); nil: nobody.
	Observer worker.Observer
	// Ownership, when set, shares the conversations among replicas on one
	// database (ownership.go); nil: this process runs them all.
	Ownership ownership.Ownership
	// Strangers answers a message from someone who may not talk to its
	// bot (bridges/features/strangers: a private notice, at most hourly); nil: the
	// message is only logged and counted.
	Strangers Strangers
	// ConvFeatures are the features with a part in each conversation's
	// worker (bridges/features/reload), attached in this order (worker.New).
	ConvFeatures []worker.ConvFeature
	// Access is the bridge's one access decision (bridges/core/access), which
	// the commands that reach other conversations (!sessions, !resume)
	// ask; default: one over Config and Store.
	Access *access.Authority
}

// In-memory state that grows with traffic is bounded. Each bound is applied
// where the state grows; what a bound makes the core forget is logged and
// counted in agentbridge_memory_evictions_total (by what). The rest of the
// core's maps are bounded by their life cycle:
//
//   - Core.convs: one worker per active conversation; a worker retires
//     after RetireIdleAfter without a process, card, unfinished message or
//     unposted reply.
//   - Core.budgets: one per channel with a running worker; released with
//     the channel's last worker.
//   - A turn's activity and tool calls: live.MaxActivity, live.MaxTools.
//   - Who was told they may not talk to a bot: strangers.MaxRemembered.
//   - A worker's messages in flight (until the result that finishes the message,
//     the CLI's completed/cancelled receipt or the process exit), cards
//     (until decided or expired), timers (one per kind and card), spared
//     (until the message is final).
//   - A session's agent events: bounded by the agent package's event queue
//     (streamjson.EventsDropped, counted in agentbridge_agent_events_dropped_total).

// Core is the platform-neutral conversation core: it implements Handler for
// every platform adapter, owns one worker per active conversation and drives
// the agent sessions. Create it with NewCore and start it with Run.
type Core struct {
	src   config.Source
	st    *store.Store
	pool  agents.Pool
	log   *slog.Logger
	clock worker.Clock
	opts  CoreOptions
	// host is the core as its workers reach it (host.go), with the
	// options they share.
	host host

	mu        sync.Mutex
	runCtx    context.Context // set by Run; cancelled when Run stops
	running   bool
	platforms map[string]bridges.Platform // by bot name
	convs     map[bridges.ConversationKey]worker.Worker
	budgets   delivery.Budgets                   // per channel (pacing)
	waiting   delivery.Waiting                   // outboxes waiting for their platform (outbox.go)
	states    *connstate.Board                   // connection state per bot
	workers   sync.WaitGroup                     // conversation queues and their helpers
	bots      botRuns                            // each bot's adapter run, stoppable alone (features.go)
	contain   atomic.Pointer[agents.Containment] // set by SetContainment; nil: CoreOptions.Spawner's (spawner)
	readers   tasks.Group                        // readers of agent sessions' events (WaitSessionReaders)
	draining  atomic.Bool                        // a graceful stop: no new messages to agents (ownership.go: Drain)
}

// botRuns are the bots' adapters running, each with its own context so
// that one can be stopped alone (StopBot), and the tasks started through
// Go, which Run waits for.
type botRuns struct {
	mu      sync.Mutex
	running map[string]botRun // by bot name
	spares  func()            // stops keeping the current warm spares
	kept    map[string]bool   // profiles whose spares are kept
	tasks   sync.WaitGroup    // adapters started by StartBot, and Go's
}

// botRun is one adapter's run.
type botRun struct {
	cancel context.CancelFunc
	done   <-chan struct{}
}

// startupWork is what the previous run left open, read before any platform
// starts so that nothing of this run is mistaken for it.
type startupWork struct {
	staleCards  []store.Approval // open approvals: their processes are gone
	outboxConvs []string         // conversations with replies still to post
	inboxConvs  []string         // conversations with messages to deliver
}

// Swapped is what the core ran before a Swap.
type Swapped struct {
	Old  map[string]bridges.Platform // the bots' adapters before, by name
	Next map[string]bridges.Platform // and after
	// RunCtx is the core's run context: what a reload starts ends with it.
	RunCtx context.Context
	// Workers are the live conversations' workers.
	Workers []worker.Worker
}

// cfg is the config in force now; callers use it for one decision.
func (c *Core) cfg() *config.Config {
	if c.src == nil {
		return nil
	}
	return c.src.Current()
}

// platform returns the adapter of bot, or nil.
func (c *Core) platform(bot string) bridges.Platform {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.platforms[bot]
}
