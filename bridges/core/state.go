package core

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core/access"
	"github.com/agentbridge/agentbridge/bridges/core/agents"
	"github.com/agentbridge/agentbridge/bridges/core/connstate"
	"github.com/agentbridge/agentbridge/bridges/core/delivery"
	"github.com/agentbridge/agentbridge/bridges/core/live"
	"github.com/agentbridge/agentbridge/bridges/core/metrics"
	"github.com/agentbridge/agentbridge/bridges/core/ownership"
	"github.com/agentbridge/agentbridge/bridges/core/render"
	"github.com/agentbridge/agentbridge/bridges/core/screen"
	"github.com/agentbridge/agentbridge/bridges/core/toolconv"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/config/profile"
	"github.com/agentbridge/agentbridge/internal/tasks"
	"github.com/agentbridge/agentbridge/queue"
	"github.com/agentbridge/agentbridge/store"
)

// This file holds the state of the core and of each conversation's worker
// (Core, CoreOptions, conversation, the running turn, the worker's inputs
// and timers), the Conv handle and the seams that take it (ConvFeature,
// ConvHook, Commands, Cards, Files): the types every other file works on.

// input is one item of a conversation's queue. The worker goroutine handles
// them one at a time and is the only goroutine touching conversation state.
type input interface{ isInput() }

type (
	inPoke   struct{}                   // pending ledger messages may be deliverable
	inAction struct{ a bridges.Action } // a click on one of our cards
	inEvent  struct {
		gen uint64
		ev  streamjson.Event
	} // from the session of generation gen
	inAcquired struct {
		gen       uint64
		sess      agents.Session
		sessionID string // set by an agents.WarmPool: the session's id (a spare's differs from the one asked for)
		err       error
		// fresh: the session was to be resumed but never finished a turn
		// anywhere (nothing stored, no transcript here): it started anew
		// with its id (resumeOptions).
		fresh bool
	} // Acquire finished
	inWaiting struct{ gen uint64 } // Acquire waits for a free slot
	inTimer   struct {
		kind timerKind
		id   string
		seq  uint64
	} // a timer fired
	inOutbox struct{} // replies an earlier run or holder left pending (Outbox.Recover)
)

func (inPoke) isInput() {}

func (inAction) isInput() {}

func (inEvent) isInput() {}

func (inAcquired) isInput() {}

func (inWaiting) isInput() {}

func (inTimer) isInput() {}

func (inOutbox) isInput() {}

// timerKind names what a timer is for.
type timerKind int

const (
	timerLive     timerKind = iota // flush the live message
	timerApproval                  // a card's approval timeout (id = card id)
	timerOutbox                    // retry posting replies
	timerRetry                     // retry delivering after a store error
	timerRetire                    // stop the worker if it is still idle
	timerStatus                    // show the working indicator (status_delay)
	timerProgress                  // post a progress line of a long turn (turn.go)
	timerDisk                      // retry the writes a full disk refused (delivery.Journal)
	timerResume                    // stop waiting for another replica's answer to !resume (id = session id)
)

type timerKey struct {
	kind timerKind
	id   string
}

type pendingTimer struct {
	t   Timer
	seq uint64
}

// sentMsg is a ledger message written to the agent and not finished yet.
type sentMsg struct {
	ledgerID   string
	platformID string // Inbound.MsgID
	from       Person // the author; for a schedule's firing its creator ("" for nobody) and the schedule's header as name
	origin     Origin
	scheduleID int64 // OriginSchedule
	started    bool  // the CLI reported it started: the next result finishes it (onResult)
}

// deciders are who may decide the cards of a turn that handles m, besides
// the bot's approvers and admins: a person's message, its author; a
// schedule's firing, the schedule's creator when a person made it, else
// nobody. Never the conversation's owner or anyone else by default.
func (m sentMsg) deciders() map[string]Person {
	out := make(map[string]Person)
	if m.from.ID != "" {
		a := m.from
		if m.origin != OriginPerson {
			a.Name = "" // the header is not their name
		}
		out[a.ID] = a
	}
	return out
}

// scheduledRun names the schedule whose firing m is, for cards ("" when
// m is not one; Scheduler.RunLabel).
func (m sentMsg) scheduledRun(s Scheduler) string {
	if m.origin != OriginSchedule || s == nil {
		return ""
	}
	return s.RunLabel(m.from.Name, m.scheduleID)
}

// conversation is the state of one conversation, owned by its worker.
type conversation struct {
	core     *Core
	key      bridges.ConversationKey
	id       string // store conversation id
	bot      *config.Bot
	profile  *profile.Agent
	platform bridges.Platform
	limits   bridges.Limits
	budget   *delivery.Budget
	screen   *screen.Screen // shows the running turn on platform
	log      *slog.Logger
	q        *queue.Queue[input]
	rescan   atomic.Bool // a message was accepted while the queue was full
	// st is the store the worker writes (and reads) its conversation
	// through: fenced by its tenure's lease with replicas (ownership.go),
	// the core's store otherwise. token is that lease's fencing token
	// (0 unfenced); lost is set once the tenure is over.
	st    *store.Store
	token int64
	lost  atomic.Bool
	taken bool // the tenure began after another replica's (ownership.Tenure.Recover)

	// Owned by the worker goroutine.
	row                store.Conversation // settings: session id, overrides
	sess               agents.Session
	gen                uint64 // generation of sess; events of older ones are ignored
	acquiring          bool
	resume             bool               // the next spawn resumes row.SessionID
	freshRetry         bool               // the resume failed: spawn the same id fresh once
	inflight           map[string]sentMsg // agent message uuid → what was sent, until finished
	spared             map[string]int     // ledger id → resets that were no crash (a failed resume)
	turn               *turn
	cards              CardSet         // open cards (CoreOptions.Cards)
	lastAuthor         Person          // of the last person's message sent to the agent
	lastSent           *sentMsg        // the last message sent to the agent (nil: none since the worker started)
	stopping           bool            // !stop asked for an interrupt
	stopUnstarted      map[string]bool // uuids sent but not begun when !stop ran: each is interrupted as it begins
	resuming           bool            // !resume waits for the session's conversation: send nothing meanwhile
	awaitedSession     string          // !resume waits for another replica's answer about this session (resume.go)
	restartAfterTurn   bool            // a setting needs a new process once the turn ends
	hooks              []ConvHook      // the features' parts of this worker (features.go)
	bypassRefusalShown bool            // told that a stored bypassPermissions is not applied
	agentGone          string          // the !agent profile the bot no longer lists: back to the default at the next message
	timers             map[timerKey]pendingTimer
	timerSeq           uint64
	outbox             *delivery.Outbox     // the final replies to post
	writes             *delivery.Journal    // writes a full disk refused, oldest first
	plan               render.Plan          // the agent's to-do list (turn.go: notePlanTool)
	limitNoticed       map[string]time.Time // resource limit → when its last hit was told (limits.go)
}

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
	Clock Clock
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
	Tools AgentTools
	// Commands runs a person's messages that are chat commands
	// (bridges/features/commands' Table: the built-in commands and those features
	// register, e.g. bridges/features/schedule's !schedule); nil: no message is a
	// command, every one goes to the agent.
	Commands Commands
	// Cards makes each conversation's cards (bridges/features/cards' Feature): the
	// permission, plan, question, elicitation and approval cards, the
	// "Always allow" grants and !rules. nil fails closed: every permission
	// request is denied with a notice, elicitations are declined.
	Cards Cards
	// Scheduler fires the stored schedules (bridges/features/schedule's Feature);
	// without one nothing fires, and Run refuses a config that has
	// schedules.
	Scheduler Scheduler
	// Spend enforces the spend limits (bridges/features/spend.New); Run refuses to
	// start without it when the config has limits: limits never silently off.
	Spend SpendGate
	// Files turns the files of people's messages into what the agent gets
	// (bridges/features/uploads.New, with the transcriber of voice notes); Run
	// refuses to start when the config has transcription and Files do not
	// transcribe. nil: the agent gets the text of a message only.
	Files Files
	// Observer, when set, sees each conversation's agent events, notices
	// and cards (bridges/features/handoff's attached terminals); nil: nobody.
	Observer Observer
	// Ownership, when set, shares the conversations among replicas on one
	// database (ownership.go); nil: this process runs them all.
	Ownership ownership.Ownership
	// Strangers answers a message from someone who may not talk to its
	// bot (bridges/features/strangers: a private notice, at most hourly); nil: the
	// message is only logged and counted.
	Strangers Strangers
	// ConvFeatures are the features with a part in each conversation's
	// worker (bridges/features/reload), attached in this order (features.go).
	ConvFeatures []ConvFeature
	// Access is the bridge's one access decision (bridges/core/access), which
	// the commands that reach other conversations (!sessions, !resume)
	// ask; default: one over Config and Store.
	Access *access.Authority
}

// Core is the platform-neutral conversation core: it implements Handler for
// every platform adapter, owns one worker per active conversation and drives
// the agent sessions. Create it with NewCore and start it with Run.
type Core struct {
	src   config.Source
	st    *store.Store
	pool  agents.Pool
	log   *slog.Logger
	clock Clock
	opts  CoreOptions
	// tools is the agent tools' names and tool lines (Tools.List, nil
	// without).
	tools toolconv.Tools

	mu        sync.Mutex
	runCtx    context.Context // set by Run; cancelled when Run stops
	running   bool
	platforms map[string]bridges.Platform // by bot name
	convs     map[bridges.ConversationKey]*conversation
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

// turn is what the worker knows about the running turn: who started it
// and, in live.Turn, what it has shown so far (shown by the conversation's
// screen.Screen).
type turn struct {
	*live.Turn
	requesters map[string]Person // who may decide its cards besides approvers (sentMsg.deciders of its messages)
	fromLedger bool              // a ledger message started it (else the agent did, e.g. after a background task)
	scheduled  string            // the schedule whose firing it handles, for its cards ("" if none)
	payer      string            // user id of the first of them: the turn's cost counts for them (limits)
}

func newTurn(now time.Time) *turn {
	return &turn{Turn: live.NewTurn(now), requesters: make(map[string]Person)}
}

// screenWorker is the conversation as its screen sees it.
type screenWorker struct{ cv *conversation }

// inCall runs f on a conversation's worker: how one conversation asks
// another to do something with its own state.
type inCall struct {
	f func(ctx context.Context, cv *conversation)
}

func (inCall) isInput() {}

// inOperatorAction is a decision taken in the operator view: the bot's
// approver list does not apply (the operator is a bridge admin). done
// receives "" on success or the problem.
type inOperatorAction struct {
	a    bridges.Action
	done chan<- string
}

func (inOperatorAction) isInput() {}

// startupWork is what the previous run left open, read before any platform
// starts so that nothing of this run is mistaken for it.
type startupWork struct {
	staleCards  []store.Approval // open approvals: their processes are gone
	outboxConvs []string         // conversations with replies still to post
	inboxConvs  []string         // conversations with messages to deliver
}

// outboxHost is the conversation as its outbox (bridges/core/delivery) sees
// it; its methods run on the worker.
type outboxHost struct{ cv *conversation }

// Worker is one live conversation's worker.
type Worker struct{ cv *conversation }

// Conv is one conversation as a feature above the core sees it: a handle
// on its worker. Its methods run on the worker only (in a ConvHook's
// methods, or in a function given to Worker.Do or Conv.After).
type Conv struct{ cv *conversation }

// Swapped is what the core ran before a Swap.
type Swapped struct {
	Old  map[string]bridges.Platform // the bots' adapters before, by name
	Next map[string]bridges.Platform // and after
	// RunCtx is the core's run context: what a reload starts ends with it.
	RunCtx context.Context
	// Workers are the live conversations' workers.
	Workers []Worker
}

// ConvFeature is a feature with a part in each conversation's worker.
type ConvFeature interface {
	// Attach returns the feature's hook for the new worker of c, when the
	// worker is made (before its first input; Conv's methods may not be
	// called yet).
	Attach(c Conv) ConvHook
}

// ConvHook is a feature's part of one conversation's worker. Every method
// runs on the worker, so it needs no lock and must not block.
type ConvHook interface {
	// AgentEvent sees each event of the conversation's live agent, before
	// the core handles it.
	AgentEvent(ev streamjson.Event, now time.Time)
	// AfterInput runs after each input the worker handled.
	AfterInput(ctx context.Context)
	// HoldsInput reports whether the people's pending messages must wait
	// instead of going to the agent now.
	HoldsInput() bool
	// StatusLine is the feature's part of !status ("" for none; each line
	// starts with "\n").
	StatusLine() string
}

// Commands are the chat commands (bridges/features/commands' Table, with the
// commands features register), run on the conversation's worker.
type Commands interface {
	// Handle runs text, which person who wrote in ledger message msgID of
	// conversation c, as a chat command if it is one: it runs it, or
	// refuses it with a notice (who may not run it, or it is written with
	// characters a command may not contain). handled reports whether text
	// was a command; if not, it goes to the agent.
	Handle(ctx context.Context, c Conv, msgID string, who Person, text string) (handled bool)
}

// Cards makes the card set of each conversation's worker (bridges/features/cards).
type Cards interface {
	// New is the empty card set of c's new worker (made before its first
	// input; Conv's methods may not be called yet).
	New(c Conv) CardSet
}

// Files turns the files of a person's message into what the agent gets
// (bridges/features/uploads: images as image blocks, voice notes transcribed, the
// rest saved in the session's uploads directory); set as
// CoreOptions.Files. Its methods run on the conversation's worker.
type Files interface {
	// Refuse reports whether the ledger message (msgID, text, quoted text,
	// files) must not reach the agent — audio alone while no
	// transcription is set up — once it told the conversation why.
	Refuse(ctx context.Context, c Conv, msgID, text, quoted string, files []bridges.File) bool
	// Fetch returns the images the agent gets and a note for every other
	// file (saved under c.UploadsDir(), or not forwarded and why).
	Fetch(ctx context.Context, c Conv, msgID string, files []bridges.File) ([]streamjson.Image, []string)
	// Transcribes reports whether voice notes are transcribed.
	Transcribes() bool
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
