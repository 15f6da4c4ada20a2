package core

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core/access"
	"github.com/agentbridge/agentbridge/bridges/core/agents"
	"github.com/agentbridge/agentbridge/bridges/core/connstate"
	"github.com/agentbridge/agentbridge/bridges/core/delivery"
	"github.com/agentbridge/agentbridge/bridges/core/ownership"
	"github.com/agentbridge/agentbridge/bridges/core/worker"
	"github.com/agentbridge/agentbridge/store"
)

// This file holds the core's life and entry points: NewCore, Run and its
// stop, the adapters' messages and clicks (Handler), and handing an input
// to a conversation's worker, starting it if needed.

// NewCore returns a core; nothing runs until Run.
func NewCore(opts CoreOptions) *Core {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Clock == nil {
		opts.Clock = worker.RealClock()
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
		convs:  make(map[bridges.ConversationKey]worker.Worker),
		states: connstate.New(opts.Logger, opts.Clock.Now),
	}
	c.host = host{c, workerOptions(opts)}
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
	if err := c.spawner().CheckContainment(c.cfg()); err != nil {
		return fmt.Errorf("run core: %w", err)
	}
	return nil
}

// stop closes every conversation worker and waits for them.
func (c *Core) stop() {
	c.mu.Lock()
	c.running = false
	convs := slices.Collect(maps.Values(c.convs))
	c.convs = make(map[bridges.ConversationKey]worker.Worker)
	c.budgets.Reset()
	c.mu.Unlock()
	for _, w := range convs {
		w.Close()
	}
	for _, w := range convs {
		w.Wait()
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
	files, err := bridges.EncodeFiles(m.Files)
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
	w, live := c.convs[a.Key]
	var err error
	if live {
		err = w.Push(worker.Click(a))
	}
	c.mu.Unlock()
	switch {
	case !live && forward:
		if conv, err := c.st.GetConversation(ctx, storeKey(a.Key)); err == nil {
			c.opts.Ownership.Forward(ctx, conv.ID, &a)
		}
	case !live || worker.Stopped(err):
		delivery.ReplyPrivately(ctx, c.log, a, "This request is no longer open.")
	case err != nil:
		delivery.ReplyPrivately(ctx, c.log, a, "The bridge is busy with this conversation; please try again in a moment.")
		return fmt.Errorf("handle action on %s: %w: %w", a.CardID, bridges.ErrBusy, err)
	}
	return nil
}

// deliver hands in to conv's worker, starting one if needed. c.mu is held
// throughout, so a worker that retires cannot close its queue in between.
func (c *Core) deliver(conv store.Conversation, in worker.Input) (worker.Worker, error) {
	t, st, err := c.claim(conv) // ownership.go
	if err != nil {
		return worker.Worker{}, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	w, err := c.conversationLocked(conv, st, t)
	if err != nil {
		return worker.Worker{}, err
	}
	if t.Recover {
		_ = w.Push(worker.RecoverOutbox()) // an earlier holder's replies
	}
	return w, w.Push(in)
}

// conversationLocked returns the running worker of conv, starting one
// writing through st if needed; c.mu is held. A worker of an earlier
// tenure than t is lost (ownership.go) and replaced.
func (c *Core) conversationLocked(conv store.Conversation, st *store.Store, t ownership.Tenure) (worker.Worker, error) {
	key := bridges.ConversationKey(conv.Key)
	if !c.running {
		return worker.Worker{}, bridges.ErrNotRunning
	}
	var token int64
	if t.Lease != nil {
		token = t.Lease.Token
	}
	if w, ok := c.convs[key]; ok {
		if w.Holds(token) {
			return w, nil
		}
		w.LoseTenure("the conversation was taken again with a new fencing token")
		delete(c.convs, key) // dropWorker stops it; the new worker takes over
	}
	bot := c.cfg().Bot(key.Bot)
	p := c.platforms[key.Bot]
	if bot == nil || p == nil {
		return worker.Worker{}, fmt.Errorf("conversation %s: %w", key, bridges.ErrUnknownBot)
	}
	profile, gone := agents.ConvProfile(c.cfg(), bot, conv) // a scheduled run may name its own profile; !agent moves it
	if profile == nil {
		return worker.Worker{}, fmt.Errorf("conversation %s: agent profile %q is not configured", key, bot.Agent)
	}
	w := worker.New(c.host, worker.Params{Row: conv, Bot: bot, Profile: profile, Gone: gone, Platform: p,
		Budget: c.budgets.For(key), Store: st, Token: token, TakenOver: t.Recover})
	c.convs[key] = w
	return w, nil
}

// retire stops an idle worker unless input is waiting for it. It runs on
// the worker itself, which exits after the current input.
func (c *Core) retire(w worker.Worker) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if w.Pending() > 0 || c.convs[w.Key()] != w {
		return false
	}
	delete(c.convs, w.Key())
	c.budgets.Release(w.Key())
	w.Close()
	return true
}
