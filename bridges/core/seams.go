package core

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/store"
)

// This file holds what the core publishes below everything else in it:
// the seams features fill that the core calls (Strangers, Scheduler; those
// a conversation's worker calls are bridges/core/worker's), the types
// features and the core share (Origin, Submission, Receipt), and the
// defaults of CoreOptions.

// Defaults for zero CoreOptions fields.
const (
	DefaultQueueCapacity   = 256
	DefaultOutboxBackoff   = 2 * time.Second
	DefaultRetireIdleAfter = 10 * time.Minute
)

// Strangers answers the message m of someone who may not talk to its bot
// (never in the conversation), on the bot's adapter p.
type Strangers interface {
	Refuse(ctx context.Context, p bridges.Platform, m bridges.Inbound)
}

// Scheduler fires the stored schedules (bridges/features/schedule implements it).
// Core.Run calls Sync once before the platforms start and Run in a
// goroutine it waits for; a config reload calls Sync and then Wake.
type Scheduler interface {
	// Sync stores the config file's schedules; an error stops Core.Run.
	Sync(ctx context.Context) error
	// Run fires the due schedules through runs until ctx ends.
	Run(ctx context.Context, runs ScheduleRuns)
	// Wake makes Run look at the schedules again. It never blocks.
	Wake()
	// RunLabel names, for the cards asked during it, the firing of
	// schedule id (Submission.ScheduleID, 0 when unknown) whose ledger
	// message's author name is from (Submission.UserName).
	RunLabel(from string, id int64) string
}

// ScheduleRuns is what the core offers the scheduler (*Core implements
// it): a firing enters a conversation through the core's one entry point
// for work (Submit) with OriginSchedule.
type ScheduleRuns interface {
	// Submit is Core.Submit.
	Submit(ctx context.Context, s Submission) (Receipt, error)
	// Platform is the running adapter of bot, nil when there is none: the
	// scheduler posts a run's header and its notices there.
	Platform(bot string) bridges.Platform
	// CountScheduledRun counts an accepted scheduled run of bot (metrics).
	CountScheduledRun(bot string)
}

// Origin says who a message comes from, which decides what it may do
// (DESIGN.md §11, "origin decides authority"):
//   - OriginPerson: a person wrote it on a platform. It may be a chat
//     command, may answer an open card, and carries its author's rights.
//   - OriginSchedule: a schedule fired. Always a prompt for the agent,
//     never a command or a card answer; it carries nobody's rights: the
//     cards of its turn go to the schedule's creator when a person made
//     it, and to the bot's approvers and admins.
//   - OriginAgent: reserved for prompts the bridge's agent tools would
//     submit; handled like OriginSchedule (no tool submits one today).
type Origin = store.Origin

// The origins of accepted messages.
const (
	OriginPerson   = store.OriginPerson
	OriginSchedule = store.OriginSchedule
	OriginAgent    = store.OriginAgent
)

// Submission is a message for a conversation's ledger, from any origin:
// the one shape in which work enters the core (Core.Submit). Its Origin
// decides what it may do once the worker takes it: only OriginPerson may
// be a chat command or answer a card, and only a person's message carries
// its author's rights.
type Submission struct {
	Origin   Origin
	Conv     store.Conversation
	MsgID    string // the platform's message id, or "schedule-<id>-<unix>": unique per bot
	User     string // the author (a person), or the schedule's creator when a person made it, or ""
	UserName string
	Text     string
	Files    []byte // bridges.EncodeFiles
	// ScheduleID says which schedule fired (OriginSchedule only).
	ScheduleID int64
	ReplyTo    string // the platform id of the message it quotes ("" = none)
	Quoted     string // the quoted message's text, for the agent
	// Accepted, when set, runs once the message is recorded (not for a
	// duplicate) and before the worker is told of it.
	Accepted func(ctx context.Context)
	// Log, when set, is the logger for this submission; nil means the
	// core's own, annotated with the conversation and message.
	Log *slog.Logger
}

// Receipt is what Submit tells its caller about a submission it took.
type Receipt struct {
	Msg       store.InboxMessage // the ledger entry (the earlier one for a duplicate)
	Duplicate bool               // the message was already recorded; it is not handed on again
}

// ErrBadSubmission is returned by Submit for a submission it refuses to
// record: an unknown origin, a missing message id or conversation.
var ErrBadSubmission = errors.New("invalid submission")
