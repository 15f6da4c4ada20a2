package ownership

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/agentbridge/agentbridge/agent"
	"github.com/agentbridge/agentbridge/bridges/core/sessiondir"
)

// This file holds how a conversation's agent resumes its session on the
// replica that holds the conversation now: from the session's CLI files
// as the store keeps them (Ownership.RestoreSession).

// Restore puts the stored CLI files of the session of opts (conversation
// convID's) back before a resume and returns opts stamped with them
// (agent.Options.ResumeStamp): the pool then reuses no agent started
// from other files, such as one this replica resumed ahead at start-up
// before another replica ran more turns. It runs on the spawning
// goroutine; without own, a resume or a state directory it changes
// nothing. Without the files the resume fails and the conversation
// starts afresh, as it tells its thread.
//
// When the files could not be restored it returns an error (logged) with
// opts stamped Unrestored, which no early agent carries (the core's warm
// resume starts none then).
func Restore(ctx context.Context, own Ownership, convID string, opts agent.Options, log *slog.Logger) (agent.Options, error) {
	if own == nil || !opts.Resume || opts.StateDir == "" {
		return opts, nil
	}
	stamp, err := own.RestoreSession(ctx, convID, opts.SessionID, opts.StateDir)
	if err != nil {
		log.Warn("restore the session's files from the store", "session", opts.SessionID, "err", err)
		opts.ResumeStamp = Unrestored
		return opts, fmt.Errorf("restore session %s: %w", opts.SessionID, err)
	}
	opts.ResumeStamp = stamp
	return opts, nil
}

// ResumeOptions is Restore for an Acquire, and reports fresh when a
// resume is bound to fail: in a tenure taken over from another replica
// (taken), a session with nothing stored and no transcript (nor ACP
// record: sessiondir.HasSession) in this
// replica's state directory — the replica that ran its first turn died
// in it — starts anew with its id instead (Resume false), rather than a
// first CLI failing to resume and a second starting fresh. Elsewhere (a
// !resume of a session whose files were not stored) the resume is tried,
// and its failure told as such.
func ResumeOptions(ctx context.Context, own Ownership, convID string, taken bool, opts agent.Options, log *slog.Logger) (_ agent.Options, fresh bool) {
	ropts, err := Restore(ctx, own, convID, opts, log)
	if err != nil || !taken || !ropts.Resume || ropts.StateDir == "" || ropts.ResumeStamp != "" ||
		sessiondir.HasSession(ropts.StateDir, ropts.SessionID) {
		return ropts, false
	}
	ropts.Resume = false
	return ropts, true
}

// Unrestored stamps a resume whose stored files could not be restored:
// whatever an earlier agent started from is not known current.
const Unrestored = "unrestored"
