package worker

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core/access"
	"github.com/agentbridge/agentbridge/bridges/core/agents"
	"github.com/agentbridge/agentbridge/bridges/core/delivery"
	"github.com/agentbridge/agentbridge/bridges/core/live"
	"github.com/agentbridge/agentbridge/bridges/core/metrics"
	"github.com/agentbridge/agentbridge/bridges/core/ownership"
	"github.com/agentbridge/agentbridge/bridges/core/render"
	"github.com/agentbridge/agentbridge/bridges/core/screen"
	"github.com/agentbridge/agentbridge/bridges/core/toolconv"
	"github.com/agentbridge/agentbridge/bridges/core/worker/timer"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/config/profile"
	"github.com/agentbridge/agentbridge/queue"
	"github.com/agentbridge/agentbridge/store"
)

// This file holds the state of one conversation's worker: its inputs
// (the worker goroutine handles them one at a time and is the only
// goroutine touching conversation state) and timers, the conversation
// itself, the running turn, the handles on it (Worker, Conv), the seams
// that take a Conv, and how the worker and the core that made it reach
// each other (Host, Options).

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
		// with its id (ownership.ResumeOptions).
		fresh bool
	} // Acquire finished
	inWaiting struct{ gen uint64 } // Acquire waits for a free slot
	inTimer   struct {
		key timerKey
		seq uint64
	} // a timer fired (timer.Set)
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

// timerKey names one of the worker's timers: what it is for, and for
// what (a card's id, a session's id; "" for the worker's own).
type timerKey struct {
	kind timerKind
	id   string
}

// sentMsg is a ledger message written to the agent and not finished yet.
type sentMsg struct {
	ledgerID   string
	platformID string // Inbound.MsgID
	from       Person // the author; for a schedule's firing its creator ("" for nobody) and the schedule's header as name
	origin     store.Origin
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
		if m.origin != store.OriginPerson {
			a.Name = "" // the header is not their name
		}
		out[a.ID] = a
	}
	return out
}

// scheduledRun names the schedule whose firing m is, for cards ("" when
// m is not one; Options.RunLabel).
func (m sentMsg) scheduledRun(label func(from string, id int64) string) string {
	if m.origin != store.OriginSchedule || label == nil {
		return ""
	}
	return label(m.from.Name, m.scheduleID)
}

// conversation is the state of one conversation, owned by its worker.
type conversation struct {
	host     Host     // the core that made the worker
	opts     *Options // host.Options()
	key      bridges.ConversationKey
	id       string // store conversation id
	bot      *config.Bot
	profile  *profile.Agent
	platform bridges.Platform
	limits   bridges.Limits
	budget   *delivery.Budget
	screen   *screen.Screen // shows the running turn on platform
	log      *slog.Logger
	q        *queue.Queue[Input]
	rescan   atomic.Bool // a message was accepted while the queue was full
	// st is the store the worker writes (and reads) its conversation
	// through: fenced by its tenure's lease with replicas (conversation.go),
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
	timers             *timer.Set[timerKey]
	outbox             *delivery.Outbox    // the final replies to post
	writes             *delivery.Journal   // writes a full disk refused, oldest first
	plan               render.Plan         // the agent's to-do list (turn.go: notePlanTool)
	limitNoticed       agents.LimitNotices // when each resource limit hit was last told (limits.go)
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

// outboxHost is the conversation as its outbox (bridges/core/delivery) sees
// it; its methods run on the worker.
type outboxHost struct{ cv *conversation }

// Worker is one live conversation's worker, as the core and the features
// that change what it runs (bridges/features/reload) hold it. Its
// methods are safe for concurrent use.
type Worker struct{ cv *conversation }

// Conv is one conversation as a feature above the core sees it: a handle
// on its worker. Its methods run on the worker only (in a ConvHook's
// methods, or in a function given to Worker.Do or Conv.After).
type Conv struct{ cv *conversation }

// Host is the core as its workers reach it: what routes conversations
// and owns the goroutines, the agents and the platforms. Its methods are
// safe for concurrent use; none of them waits for a worker.
type Host interface {
	// Options are the features' seams and the settings every worker
	// shares; they do not change while the core runs.
	Options() *Options
	// Log is the core's logger.
	Log() *slog.Logger
	// Config is the config in force now (for one decision);
	// ConfigGeneration its generation, when the core reads a *config.Live.
	Config() *config.Config
	ConfigGeneration() config.Generation
	// RunCtx is the core's run context: it ends when the core stops.
	RunCtx() context.Context
	// Go runs f in a goroutine the core waits for when it stops; Read runs
	// a reader of an agent session's events (false: the core's owner
	// already waited for its readers, and f does not run).
	Go(f func())
	Read(f func()) bool
	// Pool supplies the agent processes; Spawner is how they are spawned
	// now (with the containment in force).
	Pool() agents.Pool
	Spawner() agents.Spawner
	// Store is the core's store, not fenced to any worker's lease.
	Store() *store.Store
	// Waiting are the outboxes waiting for their platform's return.
	Waiting() *delivery.Waiting
	// Platform is bot's running adapter (nil if none); PlatformBack is a
	// sign that it answers again.
	Platform(bot string) bridges.Platform
	PlatformBack(bot string)
	// BotStates are the bots' connection states (Core.BotStates).
	BotStates() []bridges.BotStatus
	// Draining reports a graceful stop: no new messages to agents.
	Draining() bool
	// Retire stops w, idle, unless input waits for it; it runs on w.
	Retire(w Worker) bool
	// Drop stops w and its agent in the background: its tenure is over.
	Drop(w Worker)
	// Worker is the running worker of key, if any.
	Worker(key bridges.ConversationKey) (Worker, bool)
	// Deliver hands in to the worker of conv, starting one if needed; it
	// does not wait (an error: its queue is full, it is held elsewhere or
	// the core stops). ReplyTo does it from a goroutine of the core,
	// waiting for room: an answer conv waits for.
	Deliver(conv store.Conversation, in Input) error
	ReplyTo(conv store.Conversation, in Input)
}

// Options are the features' seams and the settings the workers of one
// core share (CoreOptions' parts that concern one conversation).
type Options struct {
	Clock           Clock
	Metrics         *metrics.Metrics // nil records nothing
	QueueCapacity   int              // bounds each worker's input queue
	SlowHandler     time.Duration    // one input taking longer is logged
	OutboxBackoff   time.Duration    // the first delay before re-posting a reply
	RetireIdleAfter time.Duration    // an idle worker stops after this
	Tools           AgentTools       // nil: no bridge tools
	ToolNames       toolconv.Tools   // Tools.List
	Commands        Commands
	Cards           Cards // never nil (the core's default fails closed)
	Files           Files
	Observer        Observer // never nil (the core's default sees nothing)
	Spend           SpendGate
	Ownership       ownership.Ownership // nil: one replica
	// RunLabel names a schedule's firing for its cards
	// (Scheduler.RunLabel); nil without a scheduler.
	RunLabel     func(from string, scheduleID int64) string
	ConvFeatures []ConvFeature
	Access       *access.Authority
}

// Input is one item of a worker's queue.
type Input interface{ isInput() }

// ConvFeature is a feature with a part in each conversation's worker.
type ConvFeature interface {
	// Attach returns the feature's hook for the new worker of c, when the
	// worker is made (before its first input; Conv's methods may not be
	// called yet).
	Attach(c Conv) ConvHook
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
