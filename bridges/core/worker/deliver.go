package worker

import (
	"cmp"
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/agentbridge/agentbridge/agent"
	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core/agents"
	"github.com/agentbridge/agentbridge/bridges/core/delivery"
	"github.com/agentbridge/agentbridge/bridges/core/ownership"
	"github.com/agentbridge/agentbridge/bridges/core/render"
	"github.com/agentbridge/agentbridge/internal/textcut"
	"github.com/agentbridge/agentbridge/store"
)

// maxRedeliveries is how often a message is delivered again after the agent
// died while handling it; after that it is marked failed.
const maxRedeliveries = 1

// redeliveryNote prefixes a message delivered again after a crash.
const redeliveryNote = "[agentbridge: your previous turn was interrupted because the agent process stopped unexpectedly. " +
	"This message is delivered again; check what was already done before repeating any action.]\n\n"

// deliverPending walks the conversation's pending ledger messages in order:
// a person's commands run at once (refused when written with unusual
// characters: CoreOptions.Commands), a person's replies that answer an
// open card decide it, and everything else — every message a schedule or
// the bridge originated included, whatever its text — is written to the
// agent as soon as a session is live.
func (cv *conversation) deliverPending(ctx context.Context) {
	msgs, err := cv.st.PendingInbox(ctx, cv.id)
	if err != nil {
		if ctx.Err() == nil {
			cv.log.Error("read pending messages; retrying", "err", err)
			cv.timers.After(time.Second, timerKey{timerRetry, ""})
		}
		return
	}
	blocked := false // a message could not be sent: later ones must wait (order)
	for _, m := range msgs {
		if cv.writes.Waits(m.ID) {
			continue // handled already; the ledger says so once the disk has room
		}
		if cv.handledAsCommand(ctx, m) {
			cv.finishInbox(ctx, m.ID, store.InboxCompleted, store.NoteCommand)
			continue
		}
		if m.Origin == store.OriginPerson && cv.cards.AnswerFromText(ctx, m) {
			cv.finishInbox(ctx, m.ID, store.InboxCompleted, "read as a reply to an open card")
			continue
		}
		if m.Origin == store.OriginPerson && cv.opts.Files != nil && cv.opts.Files.Refuse(ctx, Conv{cv}, m.ID, m.Text, m.Quoted, bridges.DecodeFiles(m.Files)) {
			cv.finishInbox(ctx, m.ID, store.InboxCompleted, "voice note: no transcription configured")
			continue
		}
		if blocked || cv.resuming || cv.holdsInput() || cv.host.Draining() { // held by a feature (a reload's new process) or holder (Host.Draining: Core.Drain)
			continue
		}
		if m.Attempts-cv.spared[m.ID] > maxRedeliveries {
			cv.finishInbox(ctx, m.ID, store.InboxFailed, "agent stopped again while handling it")
			cv.notice(ctx, fmt.Sprintf("⚠️ I gave up on a message from %s: the agent stopped twice while handling it. Please send it again if it still matters.", render.Mention(m.UserName, m.UserID)))
			continue
		}
		switch cv.admit(ctx, m) { // spend limits (limits.go)
		case limitRefused:
			continue
		case limitRetry:
			blocked = true
			continue
		}
		if cv.revertAgent(ctx) { // a reload took its !agent profile away (commands.go)
			blocked = true
			continue
		}
		if cv.sess == nil {
			cv.ensureSession(ctx)
			blocked = true
			continue
		}
		if err := cv.send(ctx, m); err != nil {
			cv.log.Warn("write to agent failed; the message stays pending", "ledger", m.ID, "err", err)
			blocked = true
		}
	}
}

// handledAsCommand runs ledger message m as a chat command if it is one:
// only a person's message can be; one written with characters a command
// may not contain is refused, not run and not passed to the agent.
func (cv *conversation) handledAsCommand(ctx context.Context, m store.InboxMessage) bool {
	if m.Origin != store.OriginPerson {
		return false
	}
	cmds := cv.opts.Commands
	return cmds != nil && cmds.Handle(ctx, Conv{cv}, m.ID, Person{m.UserID, m.UserName}, m.Text)
}

// send writes ledger message m to the live session and marks it sent.
func (cv *conversation) send(ctx context.Context, m store.InboxMessage) error {
	um := streamjson.UserMessage{UUID: m.ID, Text: render.QuotedPrefix(m.Quoted) + m.Text}
	if files := bridges.DecodeFiles(m.Files); len(files) > 0 && cv.opts.Files != nil {
		var notes []string
		um.Images, notes = cv.opts.Files.Fetch(ctx, Conv{cv}, m.ID, files)
		if len(notes) > 0 {
			um.Text = strings.TrimSpace(um.Text + "\n\n" + strings.Join(notes, "\n"))
		}
	}
	if m.Attempts > 0 {
		um.UUID = agents.RedeliveryUUID(m.ID, m.Attempts)
	}
	if m.Attempts-cv.spared[m.ID] > 0 {
		// Only a message a crash interrupted gets the note, not one that
		// merely went to a process whose resume failed.
		um.Text = redeliveryNote + um.Text
	}
	if err := cv.sess.Send(ctx, um); err != nil {
		return fmt.Errorf("send ledger message %s: %w", m.ID, err)
	}
	cv.markSent(ctx, m)
	cv.opts.Observer.Sent(cv.key, m.PlatformMsgID, cmp.Or(m.UserName, m.UserID), um.Text)
	cv.resume = true // the CLI has the session on disk now: later spawns resume it
	sm := sentMsg{ledgerID: m.ID, platformID: m.PlatformMsgID, from: Person{m.UserID, m.UserName},
		origin: m.Origin, scheduleID: m.ScheduleID}
	cv.inflight[um.UUID] = sm
	cv.lastSent = &sm
	if m.Origin == store.OriginPerson {
		cv.lastAuthor = sm.from
	}
	return nil
}

// markSent records that ledger message m went to the agent, with the
// conversation's activity (one commit). A mark the database cannot take
// now (a full disk) is kept and made later, in order (delivery.Journal).
func (cv *conversation) markSent(ctx context.Context, m store.InboxMessage) {
	st, id, prompt := cv.st, m.ID, render.Activity(m.Text)
	if _, err := cv.writes.Record(ctx, delivery.Write{What: "ledger sent", MarkID: id,
		Do: func(ctx context.Context) error { return st.MarkSent(ctx, id, prompt) }}); err != nil && !cv.fenced(err) {
		cv.log.Warn("update ledger", "ledger", id, "state", store.InboxSent, "err", err)
	}
}

// ensureSession starts acquiring an agent process unless one is live or on
// its way. The result arrives as inAcquired.
func (cv *conversation) ensureSession(ctx context.Context) {
	if cv.sess != nil || cv.acquiring {
		return
	}
	if cv.row.SessionID == "" {
		id := uuid.NewString()
		if err := cv.st.SetSessionID(ctx, cv.id, id); err != nil {
			if cv.fenced(err) {
				return
			}
			cv.log.Error("store new session id; retrying", "err", err)
			cv.timers.After(time.Second, timerKey{timerRetry, ""})
			return
		}
		cv.row.SessionID, cv.resume = id, false
	}
	cv.noteRefusedBypass(ctx)
	opts := cv.agentOptions()
	cv.acquiring = true
	cv.gen++
	gen := cv.gen
	limit := agents.Limit(cv.profile, func() {
		_ = cv.q.Push(inWaiting{gen: gen}) // must not block; the notice is only informational
	})
	runCtx, q, pool, key, log := cv.host.RunCtx(), cv.q, cv.host.Pool(), cv.id, cv.log
	cv.log.Debug("acquiring agent", "session", opts.SessionID, "resume", opts.Resume)
	wp, warm := pool.(agents.WarmPool)
	warm = warm && !opts.Resume // a new session: a warm spare may serve it
	cv.spawn(func() {
		var (
			sess  agents.Session
			sid   string
			err   error
			fresh bool
		)
		if warm {
			sess, sid, err = wp.AcquireNew(runCtx, key, limit, opts)
			if err == nil && sid != opts.SessionID {
				agents.MoveSpareTools(runCtx, opts, sid, log)
			}
		} else {
			var ropts agent.Options
			ropts, fresh = ownership.ResumeOptions(runCtx, cv.opts.Ownership, key, cv.taken, opts, log) // another replica's turns
			sess, err = pool.Acquire(runCtx, key, limit, ropts)
		}
		if perr := q.PushWait(runCtx, inAcquired{gen: gen, sess: sess, sessionID: sid, err: err, fresh: fresh}); perr != nil && sess != nil {
			// The conversation stopped: nobody will read the session. Its
			// channel closes when the pool's owner closes the pool.
			cv.host.Read(func() { agents.Drain(sess) })
		}
	})
}

// onAcquired installs a new session or reports why there is none.
func (cv *conversation) onAcquired(ctx context.Context, v inAcquired) {
	if v.gen != cv.gen || !cv.acquiring {
		// Cannot happen: gen changes only when a new acquire starts, and
		// !new refuses to run while one is under way.
		if v.sess != nil {
			cv.log.Warn("ignoring a session acquired for an outdated request")
			cv.host.Read(func() { agents.Drain(v.sess) })
		}
		return
	}
	cv.acquiring = false
	if v.err != nil {
		if ctx.Err() != nil {
			return
		}
		cv.log.Error("start agent", "err", v.err)
		cv.notice(ctx, "⚠️ I could not start the agent: "+textcut.OneLine(v.err.Error(), 300)+"\nYour message is kept; send another message to try again.")
		return
	}
	if v.sessionID != "" && v.sessionID != cv.row.SessionID && !cv.onSpareTaken(ctx, v.sess, v.sessionID) {
		return
	}
	cv.sess = v.sess
	cv.freshRetry = false
	if v.fresh {
		cv.resume = false // until a message is sent to it (send)
		cv.onFreshStart(ctx)
	}
	q, runCtx, gen, sess := cv.q, cv.host.RunCtx(), cv.gen, v.sess
	if !cv.host.Read(func() { forward(runCtx, q, gen, sess) }) {
		cv.sess = nil // the core's owner already waited for its readers: the core is stopped
		return
	}
	cv.deliverPending(ctx)
}

// forward copies a session's events into the conversation queue until the
// session's channel closes. If the conversation stops first it keeps
// draining, so the session never blocks on an unread channel.
func forward(ctx context.Context, q interface {
	PushWait(context.Context, Input) error
}, gen uint64, s agents.Session) {
	for ev := range s.Events() {
		if err := q.PushWait(ctx, inEvent{gen: gen, ev: ev}); err != nil {
			agents.Drain(s)
			return
		}
	}
}
