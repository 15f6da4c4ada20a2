// Package delivery is how a conversation's output reaches its platform
// and is recorded: the outbox of the agent's final replies (posted in
// order, once, retried through outages, given up after config
// delivery.give_up_after), the per-channel budget of posts and edits,
// editing a message or posting instead, and the worker's store writes,
// kept in order while the disk is full. It acts through Host, which the
// conversation's worker implements (bridges/core); it never imports the
// core and starts no goroutine.
package delivery

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core/metrics"
	"github.com/agentbridge/agentbridge/bridges/core/render"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/internal/textcut"
	"github.com/agentbridge/agentbridge/store"
)

// markPostedTimeout bounds recording that a reply was posted, which
// outlives the bridge's stop.
const markPostedTimeout = 10 * time.Second

// postStopGrace is how long a post under way may go on once the bridge is
// stopping: cut off, it may have reached the platform without its answer
// reaching the bridge, and the next run would post that reply again.
const postStopGrace = 10 * time.Second

// lateNoteAfter is how long a reply must have waited since its first failed
// attempt for its delivery to say that it is late.
const lateNoteAfter = 30 * time.Second

// MaxBackoff caps the delay between two attempts to post a reply.
const MaxBackoff = time.Minute

// Host is the conversation whose replies an Outbox posts, as its worker
// offers it. Every method is called on that worker, one at a time.
type Host interface {
	Log() *slog.Logger
	// ConvID is the store's id of the conversation.
	ConvID() string
	Bot() *config.Bot
	Platform() bridges.Platform
	Limits() bridges.Limits
	Now() time.Time
	Metrics() *metrics.Metrics
	// GiveUpAfter is config delivery.give_up_after (its default when unset).
	GiveUpAfter() time.Duration
	// TakeUrgent reserves the channel's post budget for an urgent post.
	TakeUrgent()
	// Notice posts text into the conversation, logging a failure;
	// PostNotice returns it instead.
	Notice(ctx context.Context, text string)
	PostNotice(ctx context.Context, text string) error
	// EditOrPost edits ref to m, or posts instead where ref can no longer
	// be edited (EditOrPost).
	EditOrPost(ctx context.Context, ref bridges.MessageRef, m, instead bridges.Message) (bridges.MessageRef, error)
	// RetryOutboxAfter arms the worker's outbox timer: when it fires, the
	// worker calls Outbox.Retry. Until then a sign that the platform is
	// back may call Outbox.Wake (Waiting).
	RetryOutboxAfter(d time.Duration)
	// PlatformBack is told that a call to the platform just succeeded: a
	// sign that it answers again for the other conversations (Waiting.Back).
	PlatformBack()
	// MayPost reports whether the worker may still post in the
	// conversation: false once its replica lost the conversation to
	// another (bridges/core ownership.go). Flush posts nothing more then.
	MayPost() bool
}

// Store is what the outbox reads and writes (*store.Store implements it).
type Store interface {
	PendingOutboxForConversation(ctx context.Context, convID string) ([]store.OutboxMessage, error)
	MarkOutboxRetry(ctx context.Context, id, errText string) (store.OutboxMessage, error)
	MarkOutboxFailed(ctx context.Context, id, errText string) (store.OutboxMessage, error)
	MarkOutboxPosted(ctx context.Context, id string) error
}

var _ Store = (*store.Store)(nil)

// StreamEnd is how a turn's stream ends when its reply (an outbox row) is
// posted: Stop with Last instead of a post.
type StreamEnd struct {
	S    bridges.Stream
	Last []bridges.StreamChunk
}

// Outbox posts one conversation's pending replies. It is owned by the
// conversation's worker: not safe for concurrent use.
type Outbox struct {
	h        Host
	st       Store
	writes   *Journal
	backoff  time.Duration // first retry delay
	retrying bool
	// untoldGiveUp: a given-up reply's notice could not be posted (tellGivenUp).
	untoldGiveUp bool
	delay        time.Duration
	failedAt     time.Time                     // the last failed attempt (Wake)
	inheritNext  bool                          // Recover: the next Flush's rows were left by an earlier owner
	inherited    map[string]bool               // outbox id → left by an earlier owner, not attempted since
	editReply    map[string]bridges.MessageRef // outbox id → live message to edit instead of posting
	streamReply  map[string]StreamEnd          // outbox id → stream to stop instead of posting
}

// NewOutbox is the outbox of h's conversation over st. Its writes go
// through w (a posted mark waits there while the disk is full); a failed
// post is retried after backoff, doubling up to MaxBackoff.
func NewOutbox(h Host, st Store, w *Journal, backoff time.Duration) *Outbox {
	return &Outbox{h: h, st: st, writes: w, backoff: backoff,
		editReply: make(map[string]bridges.MessageRef), streamReply: make(map[string]StreamEnd),
		inherited: make(map[string]bool)}
}

// Recover flushes the replies an earlier owner of the conversation left
// pending: a previous run of the bridge, or the replica that held it
// before this tenure. Any of them may have been in flight when that owner
// stopped — the platform may show it although no attempt was recorded —
// so each is posted as a retry (Message.Retry): the adapter looks for it
// before posting, as after a failed attempt whose answer was lost.
func (o *Outbox) Recover(ctx context.Context) {
	o.inheritNext = true
	o.Flush(ctx)
}

// Retrying reports whether a retry is scheduled.
func (o *Outbox) Retrying() bool { return o.retrying }

// Retry is the worker's outbox timer firing: post what is pending.
func (o *Outbox) Retry(ctx context.Context) {
	o.retrying = false
	o.Flush(ctx)
}

// EditInstead makes reply id, when posted, an edit of the turn's live
// message at ref (the live message becomes the reply).
func (o *Outbox) EditInstead(id string, ref bridges.MessageRef) { o.editReply[id] = ref }

// StopStreamInstead makes reply id, when posted, the Stop of the turn's
// stream e.
func (o *Outbox) StopStreamInstead(id string, e StreamEnd) { o.streamReply[id] = e }

// Flush posts the conversation's pending replies in order. A reply
// that fails for a transient reason (anything not IsPermanent: network
// errors, 5xx, 429, a disconnected platform) stays pending and is retried
// with exponential backoff capped at MaxBackoff, later replies
// waiting behind it to keep the order, until it is older than config
// delivery.give_up_after. A permanent error, or a reply past that age,
// fails the reply at once: it is marked failed, logged as an error,
// counted, and a short notice is attempted; the next reply goes on. The
// first reply that gets through after failed attempts says it is late
// (lateNote).
func (o *Outbox) Flush(ctx context.Context) {
	if o.retrying {
		return // a retry is scheduled; keep the order
	}
	log, bot := o.h.Log(), o.h.Bot().Name
	rows, err := o.st.PendingOutboxForConversation(ctx, o.h.ConvID())
	if err != nil {
		if ctx.Err() == nil {
			log.Error("read pending replies", "err", err)
			o.retryOutbox()
		}
		return
	}
	if o.inheritNext {
		o.inheritNext = false
		for _, row := range rows {
			o.inherited[row.ID] = true
		}
	}
	for _, row := range rows {
		if o.writes.Waits(row.ID) {
			continue // posted; recorded once the disk has room (journal.go)
		}
		if !o.h.MayPost() {
			return // another replica holds the conversation now: its replies are its own
		}
		if ctx.Err() != nil {
			return // stopping: the replies left are posted by the next run
		}
		pctx, cancel := graceAfter(ctx, postStopGrace)
		err := o.postReply(pctx, row)
		cancel()
		if err == nil {
			delete(o.inherited, row.ID)
			o.h.PlatformBack() // the others waiting through an outage go too
			if errors.Is(o.markPosted(ctx, row.ID), store.ErrFenced) {
				return // the new holder posts what is left (and this reply, once more)
			}
			if row.Attempts > 0 {
				log.Info("reply posted after failed attempts", "outbox", row.ID, "attempts", row.Attempts,
					"waited", o.h.Now().Sub(row.FirstFailedAt).Round(time.Second))
			}
			continue
		}
		if ctx.Err() != nil {
			return // stopping: the reply stays pending for the next run
		}
		o.h.Metrics().OutboxFailure(bot)
		reason := o.giveUpReason(row, err)
		if reason == "" {
			upd, merr := o.st.MarkOutboxRetry(ctx, row.ID, err.Error())
			if merr != nil {
				log.Error("record failed reply", "outbox", row.ID, "err", merr)
			} else if upd.Attempts == 1 {
				log.Warn("post reply failed; will retry until it is delivered or given up", "outbox", row.ID,
					"give_up_after", o.h.GiveUpAfter(), "err", err)
			} else {
				log.Debug("post reply failed again; will retry", "outbox", row.ID, "attempts", upd.Attempts, "err", err)
			}
			o.retryOutbox()
			return
		}
		upd, merr := o.st.MarkOutboxFailed(ctx, row.ID, err.Error())
		if merr != nil {
			log.Error("record failed reply", "outbox", row.ID, "err", merr)
			o.retryOutbox()
			return
		}
		delete(o.inherited, row.ID)
		o.h.Metrics().OutboxGivenUp(bot, reason)
		log.Error("reply could not be posted; giving up", "outbox", row.ID, "reason", reason,
			"attempts", upd.Attempts, "age", o.h.Now().Sub(row.CreatedAt).Round(time.Second), "err", err)
		o.tellGivenUp(ctx, row, o.failedNotice(reason, row, err))
	}
	o.delay = 0
}

// tellGivenUp posts notice, which says that reply row was given up, in the
// conversation. When the conversation cannot take it either (its channel
// is gone, the bot was removed), the first such failure of the
// conversation is logged as an error with the bot and conversation, later
// ones at debug level: the given-up replies are already logged one by one,
// counted in agentbridge_outbox_failed_total and shown in /healthz
// (failed_24h) and the operator view.
func (o *Outbox) tellGivenUp(ctx context.Context, row store.OutboxMessage, notice string) {
	err := o.h.PostNotice(ctx, notice)
	switch {
	case err == nil || ctx.Err() != nil:
	case !o.untoldGiveUp:
		o.untoldGiveUp = true
		o.h.Log().Error("could not tell the conversation that a reply was given up; /healthz failed_24h and the operator view show it",
			"bot", o.h.Bot().Name, "outbox", row.ID, "err", err)
	default:
		o.h.Log().Debug("could not tell the conversation that another reply was given up", "outbox", row.ID, "err", err)
	}
}

// Why a reply is given up (the reason label of agentbridge_outbox_failed_total).
const (
	giveUpPermanent = "permanent" // the platform refused it for good
	giveUpExpired   = "expired"   // still failing when older than delivery.give_up_after
)

// giveUpReason says whether a reply whose post failed with err is given up
// (and why), or "" to keep it pending.
func (o *Outbox) giveUpReason(row store.OutboxMessage, err error) string {
	switch {
	case bridges.IsPermanent(err):
		return giveUpPermanent
	case o.h.Now().Sub(row.CreatedAt) >= o.h.GiveUpAfter():
		return giveUpExpired
	}
	return ""
}

// failedNotice tells the conversation that a reply was given up.
func (o *Outbox) failedNotice(reason string, row store.OutboxMessage, err error) string {
	if reason == giveUpExpired {
		return fmt.Sprintf("⚠️ A reply of the agent could not be posted: %s kept refusing it for %s (%s). Ask the agent to repeat it if needed.",
			o.platformTitle(), render.FormatOutage(o.h.Now().Sub(row.CreatedAt)), textcut.OneLine(err.Error(), 120))
	}
	return fmt.Sprintf("⚠️ A reply of the agent could not be posted (%s). Ask the agent to repeat it if needed.",
		textcut.OneLine(err.Error(), 120))
}

// GiveUpAfter is config delivery.give_up_after of cfg (its default when
// unset).
func GiveUpAfter(cfg *config.Config) time.Duration {
	if d := cfg.Delivery.GiveUpAfter; d > 0 {
		return d
	}
	return config.DefaultGiveUpAfter
}

// markPosted records that reply id was posted, even while the bridge
// stops (or the next run would post it again); when the disk is full, as
// soon as it has room (Journal.Record). It returns the error it logged.
func (o *Outbox) markPosted(ctx context.Context, id string) error {
	st := o.st
	_, err := o.writes.Record(ctx, Write{What: "reply posted", MarkID: id, Do: func(ctx context.Context) error {
		mctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), markPostedTimeout)
		defer cancel()
		return st.MarkOutboxPosted(mctx, id)
	}})
	if err != nil {
		o.h.Log().Error("mark reply posted", "outbox", id, "err", err)
	}
	return err
}

// retryOutbox schedules the next flush with exponential backoff: the first
// delay is the outbox's backoff, doubling up to MaxBackoff.
func (o *Outbox) retryOutbox() {
	o.failedAt = o.h.Now()
	if o.delay == 0 {
		o.delay = o.backoff
	} else {
		o.delay = min(2*o.delay, MaxBackoff)
	}
	o.retrying = true
	o.h.RetryOutboxAfter(o.delay)
}

// lateNote is the line that a reply posted now after failed attempts
// carries: "_(delivered after a Slack outage of 12 min)_", measured from
// its first failed attempt; "" when it has not failed or waited less than
// lateNoteAfter. Only the reply that failed gets it: the replies that
// waited behind it are posted right after it, in the same outage.
func (o *Outbox) lateNote(row store.OutboxMessage) string {
	if row.Attempts == 0 || row.FirstFailedAt.IsZero() {
		return ""
	}
	waited := o.h.Now().Sub(row.FirstFailedAt)
	if waited < lateNoteAfter {
		return ""
	}
	return fmt.Sprintf("_(delivered after a %s outage of %s)_", o.platformTitle(), render.FormatOutage(waited))
}

// postReply shows one reply: as the end of the turn's stream when the
// stream shows the answer, as an edit of the turn's live message when the
// reply replaces it and the platform can still edit it, else as a new post.
func (o *Outbox) postReply(ctx context.Context, row store.OutboxMessage) error {
	o.h.TakeUrgent()
	if se, ok := o.streamReply[row.ID]; ok {
		err := stopWithReply(ctx, se, row.ID)
		if err == nil {
			delete(o.streamReply, row.ID)
			return nil
		}
		_, keyed := se.S.(bridges.ReplyStopper)
		if keyed && !bridges.IsPermanent(err) {
			// The stop may have reached the platform with its answer lost,
			// or not: the retry stops it again (a stream no longer open
			// says so permanently, below) rather than posting the answer
			// beside the open stream.
			return fmt.Errorf("stop the stream with the reply: %w", err)
		}
		delete(o.streamReply, row.ID) // the reply is posted instead
		if !keyed {
			return fmt.Errorf("stop the stream with the reply: %w", err)
		}
		// No longer open: the earlier stop, which carried the reply's key,
		// may be what ended it. Post as a retry: the adapter looks first.
		o.h.Log().Info("the reply's stream is no longer open; posting the reply unless the platform shows it", "outbox", row.ID, "err", err)
		m := replyMessage(row)
		m.Retry = true
		if _, err := o.h.Platform().Post(ctx, bridges.ConversationKey(row.Key), m); err != nil {
			return fmt.Errorf("post reply: %w", err)
		}
		return nil
	}
	if ref, ok := o.editReply[row.ID]; ok {
		instead := replyMessage(row)
		instead.Retry = instead.Retry || o.inherited[row.ID]
		_, err := o.h.EditOrPost(ctx, ref, bridges.Message{Text: row.Text}, instead)
		if err == nil {
			delete(o.editReply, row.ID)
			return nil
		}
		if !bridges.IsPermanent(err) {
			// The edit may have been made with its answer lost: the retry
			// edits again (the same text; an edit is idempotent) rather
			// than posting the answer beside the live message.
			return fmt.Errorf("edit live message into reply: %w", err)
		}
		// The live message cannot take it (deleted, too old): post.
		delete(o.editReply, row.ID)
		o.h.Log().Info("the live message cannot become the reply; posting it", "outbox", row.ID, "err", err)
	}
	m := replyMessage(row)
	m.Retry = m.Retry || o.inherited[row.ID]
	if note := o.lateNote(row); note != "" {
		if withNote, lim := m.Text+"\n\n"+note, o.h.Limits(); lim.MaxMessageRunes <= 0 || utf8.RuneCountInString(withNote) <= lim.MaxMessageRunes {
			m.Text = withNote
		} else {
			o.h.Notice(ctx, note) // no room in the reply: just before it
		}
	}
	if _, err := o.h.Platform().Post(ctx, bridges.ConversationKey(row.Key), m); err != nil {
		return fmt.Errorf("post reply: %w", err)
	}
	return nil
}

// stopWithReply ends stream se with reply id's last chunks and feedback
// buttons, marked with the reply's key where the stream can carry it.
func stopWithReply(ctx context.Context, se StreamEnd, id string) error {
	last := append(slices.Clip(se.Last), FeedbackChunk(id))
	if rs, ok := se.S.(bridges.ReplyStopper); ok {
		return rs.StopReply(ctx, last, id)
	}
	return se.S.Stop(ctx, last)
}

// replyMessage is the post of outbox row: its idempotency key is the row's
// id, and it is a retry when an earlier attempt failed (its response may
// have been lost after the platform accepted it).
func replyMessage(row store.OutboxMessage) bridges.Message {
	return bridges.Message{Text: row.Text, ReplyTo: row.ReplyTo, Idem: row.ID, Retry: row.Attempts > 0}
}

// platformTitle is how people call the conversation's platform.
func (o *Outbox) platformTitle() string {
	return cmp.Or(o.h.Limits().Title, o.h.Bot().Platform)
}

// FeedbackPrefix starts the CardID of an answer's feedback buttons; the
// rest is the answer's outbox id.
const FeedbackPrefix = "feedback:"

// FeedbackChunk asks for feedback buttons under the answer that is the
// outbox reply replyID.
func FeedbackChunk(replyID string) bridges.StreamChunk {
	return bridges.StreamChunk{Feedback: FeedbackPrefix + replyID}
}

// FailedRepliesWindow is how far back Summary counts replies given up.
const FailedRepliesWindow = 24 * time.Hour

// Summary returns, per bot, the final replies waiting to be posted
// (with the oldest one's time) and those given up within
// FailedRepliesWindow before now: what /healthz, the metrics and the
// operator page show. Bots with neither are left out.
func Summary(ctx context.Context, st *store.Store, now time.Time) ([]store.OutboxBotSummary, error) {
	out, err := st.OutboxSummary(ctx, now.Add(-FailedRepliesWindow))
	if err != nil {
		return nil, fmt.Errorf("replies waiting or failed: %w", err)
	}
	return out, nil
}

// StatusLine is !status's line about the conversation's replies
// waiting to be posted (kept through a platform outage): how many, since
// when (the oldest's first failed attempt, else when it was produced) and
// the last error; "" when none waits.
func (o *Outbox) StatusLine(ctx context.Context) string {
	rows, err := o.st.PendingOutboxForConversation(ctx, o.h.ConvID())
	if err != nil {
		o.h.Log().Warn("read replies waiting for !status", "err", err)
		return "\n• replies waiting to be posted: unknown (the database could not be read)"
	}
	if len(rows) == 0 {
		return ""
	}
	oldest := rows[0]
	since := oldest.CreatedAt
	if !oldest.FirstFailedAt.IsZero() {
		since = oldest.FirstFailedAt
	}
	line := fmt.Sprintf("\n• replies waiting to be posted: %d since %s (%s ago)", len(rows),
		since.UTC().Format("2006-01-02 15:04:05 UTC"), render.RoundAgo(o.h.Now().Sub(since)))
	if oldest.LastError != "" {
		line += "; last error: " + textcut.OneLine(oldest.LastError, 200)
	}
	return line
}

// graceAfter returns a context with ctx's values that ends grace after ctx
// ends, or when cancel is called.
func graceAfter(ctx context.Context, grace time.Duration) (context.Context, context.CancelFunc) {
	g, cancel := context.WithCancel(context.WithoutCancel(ctx))
	var t *time.Timer
	var mu sync.Mutex
	stop := context.AfterFunc(ctx, func() {
		mu.Lock()
		defer mu.Unlock()
		t = time.AfterFunc(grace, cancel)
	})
	return g, func() {
		stop()
		mu.Lock()
		if t != nil {
			t.Stop()
		}
		mu.Unlock()
		cancel()
	}
}
