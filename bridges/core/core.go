// Package core is the platform-neutral conversation core: Core implements
// bridges.Handler for every adapter, records each message in the ledger
// (Submit, the one entry point for people, schedules and the agent's
// tools), and runs one worker per active conversation that drives its
// agent process: turns, delivery through the outbox, recovery after
// crashes, approvals and questions, and chat commands.
package core

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
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
	"github.com/agentbridge/agentbridge/bridges/core/toolconv"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/config/profile"
	"github.com/agentbridge/agentbridge/internal/tasks"
	"github.com/agentbridge/agentbridge/queue"
	"github.com/agentbridge/agentbridge/store"
)

// Defaults for zero CoreOptions fields.
const (
	DefaultQueueCapacity   = 256
	DefaultOutboxBackoff   = 2 * time.Second
	DefaultRetireIdleAfter = 10 * time.Minute
	defaultEditInterval    = time.Second
)

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

// Strangers answers the message m of someone who may not talk to its bot
// (never in the conversation), on the bot's adapter p.
type Strangers interface {
	Refuse(ctx context.Context, p bridges.Platform, m bridges.Inbound)
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

var _ bridges.Handler = (*Core)(nil)

// NewCore returns a core; nothing runs until Run.
func NewCore(opts CoreOptions) *Core {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Clock == nil {
		opts.Clock = realClock{}
	}
	if opts.QueueCapacity <= 0 {
		opts.QueueCapacity = DefaultQueueCapacity
	}
	if opts.OutboxBackoff <= 0 {
		opts.OutboxBackoff = DefaultOutboxBackoff
	}
	if opts.RetireIdleAfter <= 0 {
		opts.RetireIdleAfter = DefaultRetireIdleAfter
	}
	if opts.Access == nil {
		opts.Access = access.New(opts.Config, opts.Store)
	}
	c := &Core{
		src:    opts.Config,
		st:     opts.Store,
		pool:   opts.Pool,
		log:    opts.Logger,
		clock:  opts.Clock,
		opts:   opts,
		convs:  make(map[bridges.ConversationKey]*conversation),
		states: connstate.New(opts.Logger, opts.Clock.Now),
	}
	if opts.Tools != nil {
		c.tools = opts.Tools.List()
	}
	return c
}

// Run starts the core with one adapter per bot (keyed by bot name; every key
// must be a configured bot), recovers what the previous run left behind
// (see recovery.go) and runs every platform with the core as its Handler
// (one that also takes the bot's StateReporter reports). A platform whose
// Run fails stops only its bot: the bot is marked failed (BotStates) and
// the others keep running. Run returns nil when ctx ends, or, when every
// platform has failed, their errors joined. On return every conversation
// worker has stopped; agent processes are left to the pool's owner to close,
// who then waits for their readers (WaitSessionReaders).
func (c *Core) Run(ctx context.Context, platforms map[string]bridges.Platform) error {
	if err := c.checkWiring(platforms); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	c.mu.Lock()
	if c.running {
		c.mu.Unlock()
		cancel()
		return errors.New("run core: already running")
	}
	c.runCtx, c.running, c.platforms = ctx, true, platforms
	c.mu.Unlock()
	var err error
	defer func() {
		cancel()
		c.stop()
	}()

	var work startupWork
	if c.opts.Ownership == nil { // replicas recover per conversation (claim)
		work, err = c.prepareRecovery(ctx)
	}
	if err == nil && c.opts.Scheduler != nil {
		err = c.opts.Scheduler.Sync(ctx)
	}
	switch {
	case err != nil && ctx.Err() != nil:
		return nil // stopped while starting: not a failure
	case err != nil:
		return fmt.Errorf("run core: %w", err)
	}
	c.SetSpares(platforms)
	defer c.stopSpares()
	errc := make(chan error, len(platforms))
	var wg sync.WaitGroup
	var failed atomic.Int32
	for name, p := range platforms {
		wg.Go(func() {
			if err := c.runBot(ctx, name, p); err != nil { // a reload may stop it
				errc <- err
				if int(failed.Add(1)) == len(platforms) {
					cancel() // no bot left to serve
				}
			}
		})
	}
	wg.Go(func() { c.recoverStartup(ctx, work) })
	wg.Go(func() { c.warmResumeRecent(ctx, platforms) }) // warmresume.go
	if sc := c.opts.Scheduler; sc != nil {
		wg.Go(func() { sc.Run(ctx, c) })
	}
	wg.Wait()
	c.bots.tasks.Wait() // bots started by StartBot, tasks by Go (a reload's)
	close(errc)
	var errs []error
	for err := range errc {
		errs = append(errs, err)
	}
	if len(platforms) > 0 && len(errs) == len(platforms) {
		return errors.Join(errs...)
	}
	<-ctx.Done()
	return nil
}

// checkWiring reports what Run lacks to run the config with platforms:
// a required option, the feature a config section needs (transcription,
// spend limits, schedules), a platform's bot, a profile's sandbox or
// network.
func (c *Core) checkWiring(platforms map[string]bridges.Platform) error {
	if c.src == nil || c.cfg() == nil || c.st == nil || c.pool == nil {
		return errors.New("run core: Config, Store and Pool are required")
	}
	if c.cfg().Transcription.Enabled() && (c.opts.Files == nil || !c.opts.Files.Transcribes()) {
		return errors.New("run core: the config has transcription but no Files transcribe voice notes")
	}
	if len(c.cfg().Limits) > 0 && c.opts.Spend == nil {
		return errors.New("run core: the config has spend limits but no Spend gate enforces them")
	}
	if len(c.cfg().Schedules) > 0 && c.opts.Scheduler == nil {
		return errors.New("run core: the config has schedules but no Scheduler fires them")
	}
	for name := range platforms {
		if c.cfg().Bot(name) == nil {
			return fmt.Errorf("run core: platform for bot %q: %w", name, bridges.ErrUnknownBot)
		}
	}
	for name, a := range c.cfg().Agents {
		if a.Sandbox != "" && a.Sandbox != profile.SandboxNone && c.spawner().Sandboxes[name] == nil {
			return fmt.Errorf("run core: agent profile %q: no %s sandbox was provided", name, a.Sandbox)
		}
		if m := a.Network.Mode; a.Sandbox == profile.SandboxBwrap && (m == profile.NetworkProxy || m == profile.NetworkNone) &&
			c.spawner().Networks[name].Mode != m {
			return fmt.Errorf("run core: agent profile %q: no network setup for network mode %s was provided", name, m)
		}
	}
	return nil
}

// WaitSessionReaders waits until the core's readers of agent sessions'
// events have returned. A reader forwards a live session's events to its
// conversation, or drains them once nobody else will (the conversation
// stopped; agent processes outlive Run: the pool's owner closes them), so
// readers end when their sessions' event channels close. Call it after
// Run has returned and the pool is closed; no reader starts afterwards.
func (c *Core) WaitSessionReaders() { c.readers.Close() }

// stop closes every conversation worker and waits for them.
func (c *Core) stop() {
	c.mu.Lock()
	c.running = false
	convs := make([]*conversation, 0, len(c.convs))
	for _, cv := range c.convs {
		convs = append(convs, cv)
	}
	c.convs = make(map[bridges.ConversationKey]*conversation)
	c.budgets.Reset()
	c.mu.Unlock()
	for _, cv := range convs {
		cv.q.Close()
	}
	for _, cv := range convs {
		cv.q.Wait()
		cv.stopTimers()
	}
	c.workers.Wait()
}

// HandleMessage implements Handler: access check, then submit as a
// person's message (durable ledger entry, hand-off to the conversation's
// worker). It never waits for the agent.
func (c *Core) HandleMessage(ctx context.Context, m bridges.Inbound) error {
	bot := c.cfg().Bot(m.Key.Bot)
	if bot == nil {
		return fmt.Errorf("handle message %s: bot %q: %w", m.MsgID, m.Key.Bot, bridges.ErrUnknownBot)
	}
	if m.MsgID == "" || m.Key.Channel == "" {
		return fmt.Errorf("handle message for %s: message id and channel are required: %w", m.Key, bridges.ErrInvalidMessage)
	}
	log := c.log.With("key", m.Key, "msg_id", m.MsgID, "user", m.UserID)
	if !channelAllowed(bot, m.Key.Channel) {
		log.Info("message ignored: channel not allowed")
		c.opts.Metrics.Message(m.Key.Bot, "ignored")
		return nil
	}
	if !userAllowed(bot, m.UserID) {
		log.Info("message refused: user not allowed")
		if c.opts.Strangers != nil {
			c.opts.Strangers.Refuse(ctx, c.platform(m.Key.Bot), m)
		}
		c.opts.Metrics.Message(m.Key.Bot, "refused")
		return nil
	}
	conv, created, err := c.st.GetOrCreateConversation(ctx, storeKey(m.Key), bot.Agent, m.UserID)
	if err != nil {
		return notRecorded(m.MsgID, err)
	}
	files, err := encodeFiles(m.Files)
	if err != nil {
		return fmt.Errorf("handle message %s: %w", m.MsgID, err)
	}
	r, err := c.Submit(ctx, Submission{Origin: OriginPerson, Conv: conv, MsgID: m.MsgID, User: m.UserID,
		UserName: m.UserName, Text: m.Text, Files: files, ReplyTo: m.ReplyTo, Quoted: m.Quoted,
		Log: log.With("new_conversation", created)})
	if err != nil {
		return notRecorded(m.MsgID, err)
	}
	if r.Duplicate {
		log.Debug("duplicate delivery ignored", "ledger", r.Msg.ID, "state", r.Msg.State)
		c.opts.Metrics.Message(m.Key.Bot, "duplicate")
		return nil
	}
	c.opts.Metrics.Message(m.Key.Bot, "accepted")
	return nil // durable either way
}

// notRecorded is HandleMessage's error for a message the store did not
// take; it wraps ErrStorageFull when the disk is full.
func notRecorded(msgID string, err error) error {
	if store.IsFull(err) {
		return fmt.Errorf("handle message %s: %w: %w", msgID, bridges.ErrStorageFull, err)
	}
	return fmt.Errorf("handle message %s: %w", msgID, err)
}

// HandleAction implements Handler: it routes a click to the conversation
// that owns the card. Clicks on cards no worker knows (e.g. from before a
// restart) are answered privately; with replicas (ownership.Ownership) they go to
// the replica running the conversation. A click on an answer's feedback
// buttons is recorded at once (delivery.Feedback).
func (c *Core) HandleAction(ctx context.Context, a bridges.Action) error {
	return c.routeAction(ctx, a, c.opts.Ownership != nil)
}

// HandleForwardedAction routes a click another replica received for a
// conversation this one runs (ownership.Ownership.Forward); it is not forwarded again.
func (c *Core) HandleForwardedAction(ctx context.Context, a bridges.Action) error {
	return c.routeAction(ctx, a, false)
}

func (c *Core) routeAction(ctx context.Context, a bridges.Action, forward bool) error {
	if c.cfg().Bot(a.Key.Bot) == nil {
		return fmt.Errorf("handle action on %s: bot %q: %w", a.CardID, a.Key.Bot, bridges.ErrUnknownBot)
	}
	if strings.HasPrefix(a.CardID, delivery.FeedbackPrefix) {
		return delivery.Feedback{Store: c.st, Allowed: c.Allowed, Metrics: c.opts.Metrics, Log: c.log}.Record(ctx, a)
	}
	c.mu.Lock()
	cv := c.convs[a.Key]
	var err error
	if cv != nil {
		err = cv.q.Push(inAction{a})
	}
	c.mu.Unlock()
	switch {
	case cv == nil && forward:
		if conv, err := c.st.GetConversation(ctx, storeKey(a.Key)); err == nil {
			c.opts.Ownership.Forward(ctx, conv.ID, &a)
		}
	case cv == nil || errors.Is(err, queue.ErrClosed):
		replyPrivately(ctx, c.log, a, "This request is no longer open.")
	case err != nil:
		replyPrivately(ctx, c.log, a, "The bridge is busy with this conversation; please try again in a moment.")
		return fmt.Errorf("handle action on %s: %w: %w", a.CardID, bridges.ErrBusy, err)
	}
	return nil
}

// Owns implements Handler: whether the bot has a conversation at key.
func (c *Core) Owns(ctx context.Context, key bridges.ConversationKey) (bool, error) {
	c.mu.Lock()
	_, live := c.convs[key]
	c.mu.Unlock()
	if live {
		return true, nil
	}
	_, err := c.st.GetConversation(ctx, storeKey(key))
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, store.ErrNotFound):
		return false, nil
	default:
		return false, fmt.Errorf("owns %s: %w", key, err)
	}
}

// deliver hands in to conv's worker, starting one if needed. c.mu is held
// throughout, so a worker that retires cannot close its queue in between.
func (c *Core) deliver(conv store.Conversation, in input) (*conversation, error) {
	t, st, err := c.claim(conv) // ownership.go
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	cv, err := c.conversationLocked(conv, st, t)
	if err != nil {
		return nil, err
	}
	if t.Recover {
		_ = cv.q.Push(inOutbox{}) // an earlier holder's replies
	}
	return cv, cv.q.Push(in)
}

// conversationLocked returns the running worker of conv, starting one
// writing through st if needed; c.mu is held. A worker of an earlier
// tenure than t is lost (ownership.go) and replaced.
func (c *Core) conversationLocked(conv store.Conversation, st *store.Store, t ownership.Tenure) (*conversation, error) {
	key := bridges.ConversationKey(conv.Key)
	if !c.running {
		return nil, bridges.ErrNotRunning
	}
	var token int64
	if t.Lease != nil {
		token = t.Lease.Token
	}
	if cv := c.convs[key]; cv != nil {
		if cv.token == token && !cv.lost.Load() {
			return cv, nil
		}
		cv.loseTenure("the conversation was taken again with a new fencing token")
		delete(c.convs, key) // dropWorker stops it; the new worker takes over
	}
	bot := c.cfg().Bot(key.Bot)
	p := c.platforms[key.Bot]
	if bot == nil || p == nil {
		return nil, fmt.Errorf("conversation %s: %w", key, bridges.ErrUnknownBot)
	}
	profile, gone := convProfile(c.cfg(), bot, conv) // a scheduled run may name its own profile; !agent moves it
	if profile == nil {
		return nil, fmt.Errorf("conversation %s: agent profile %q is not configured", key, bot.Agent)
	}
	cv := newConversation(c, conv, bot, profile, gone, p, st, token, t.Recover)
	c.convs[key] = cv
	return cv, nil
}

// retire stops an idle worker unless input is waiting for it. It runs on
// the worker itself, which exits after the current input.
func (c *Core) retire(cv *conversation) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cv.q.Len() > 0 || c.convs[cv.key] != cv {
		return false
	}
	delete(c.convs, cv.key)
	c.budgets.Release(cv.key)
	cv.q.Close()
	return true
}

// ActiveConversations returns how many conversation workers are running.
func (c *Core) ActiveConversations() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.convs)
}

// platform returns the adapter of bot, or nil.
func (c *Core) platform(bot string) bridges.Platform {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.platforms[bot]
}

// replyPrivately answers a clicker through Action.Reply, if the platform
// offers it.
func replyPrivately(ctx context.Context, log *slog.Logger, a bridges.Action, text string) {
	if a.Reply == nil {
		return
	}
	if err := a.Reply(ctx, text); err != nil {
		log.Warn("private reply to a click failed", "key", a.Key, "user", a.UserID, "err", err)
	}
}

func storeKey(k bridges.ConversationKey) store.ConversationKey { return store.ConversationKey(k) }

// newQueue creates a conversation's input queue.
func (c *Core) newQueue(cv *conversation) *queue.Queue[input] {
	return queue.New(cv.handle, queue.Options[input]{
		Name:      cv.key.String(),
		Capacity:  c.opts.QueueCapacity,
		SlowAfter: c.opts.SlowHandler,
		Logger:    c.log,
		OnPanic: func(in input, r any, _ []byte) {
			cv.log.Error("conversation worker recovered from a panic", "input", fmt.Sprintf("%T", in), "panic", fmt.Sprint(r))
		},
	})
}

// Clock is the core's source of time and timers; tests use a fake one.
type Clock interface {
	Now() time.Time
	// AfterFunc calls f in its own goroutine after d. Stop reports whether
	// it prevented the call.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a pending AfterFunc call.
type Timer interface{ Stop() bool }

// realClock is Clock over package time.
type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }

// RealClock is the real time, the default Clock.
func RealClock() Clock { return realClock{} }
