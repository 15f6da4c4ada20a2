package core

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"time"

	"github.com/agentbridge/agentbridge/agent"
	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core/toolconv"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/store"
)

// This file holds what the core publishes below everything else in it:
// the seams features fill (Strangers, Observer, Scheduler, SpendGate, the
// agent tools' server, …), the types features and the core share (Person,
// Origin, Submission), the clock, and the defaults of CoreOptions.

// Defaults for zero CoreOptions fields.
const (
	DefaultQueueCapacity   = 256
	DefaultOutboxBackoff   = 2 * time.Second
	DefaultRetireIdleAfter = 10 * time.Minute
	defaultEditInterval    = time.Second
)

// Strangers answers the message m of someone who may not talk to its bot
// (never in the conversation), on the bot's adapter p.
type Strangers interface {
	Refuse(ctx context.Context, p bridges.Platform, m bridges.Inbound)
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

var (
	// ErrStarting: the conversation's agent is starting.
	ErrStarting = errors.New("the agent is starting")
	// ErrResuming: a !resume is under way in the conversation.
	ErrResuming = errors.New("a resume is under way")
	// ErrWorking: the conversation's agent is working (a turn, a message
	// in flight, an open card, or it is starting).
	ErrWorking = errors.New("the agent is working")
	// ErrSessionBusy: the session's agent is working in its conversation.
	ErrSessionBusy = errors.New("the session's agent is working in its thread")
)

// CardSet is one conversation's open cards. Every method runs on the
// conversation's worker.
type CardSet interface {
	// Len is the number of open cards.
	Len() int
	// OnPermission decides the agent's permission request (rules, grants)
	// or opens its card; OnElicitation opens an MCP server's form.
	OnPermission(ctx context.Context, req streamjson.PermissionRequest)
	OnElicitation(ctx context.Context, e streamjson.Elicitation)
	// OnAction handles a click on one of the conversation's cards.
	OnAction(ctx context.Context, a bridges.Action)
	// AnswerFromText reads person's message m as the answer to an open
	// card if it is one (reporting whether it consumed m).
	AnswerFromText(ctx context.Context, m store.InboxMessage) bool
	// Operator applies an operator's decision to card a.CardID; it returns
	// a problem to tell the operator, or "".
	Operator(ctx context.Context, a bridges.Action) string
	// OpenApproval opens the approval card a feature asks for on the
	// agent's behalf (toolconv.Conversation.AskApproval).
	OpenApproval(ctx context.Context, a toolconv.Approval) error
	// Expire denies card id, which nobody answered in time (its timer,
	// Conv.StartTimer, fired); Close ends card id without answering the
	// agent; ExpireAll closes every open card.
	Expire(ctx context.Context, id string)
	Close(ctx context.Context, id string, audit store.Decision, by, status string)
	ExpireAll(ctx context.Context, status string)
	// Rules runs "!rules" with its argument words: lists the rules and
	// grants; "rm N" removes a grant (the caller checked that who is an
	// admin).
	Rules(ctx context.Context, args []string, who Person)
}

// EncodeCardRef is a card's message reference as the audit table stores
// it, so that a restarted bridge can close the card (DecodeCardRef).
func EncodeCardRef(ref bridges.MessageRef) string {
	b, err := json.Marshal(ref)
	if err != nil {
		return ""
	}
	return string(b)
}

// DecodeCardRef reads a reference EncodeCardRef wrote; false for none.
func DecodeCardRef(s string) (bridges.MessageRef, bool) {
	var ref bridges.MessageRef
	if s == "" || json.Unmarshal([]byte(s), &ref) != nil || ref.ID == "" {
		return bridges.MessageRef{}, false
	}
	return ref, true
}

// CardIdem is the bridges.Message.Idem the card of request id in
// conversation conv is posted with (bridges/features/cards), the same on
// every holder: recovery posts the closed card under it with Retry set to
// find a card whose reference was never stored (closeStaleCards). The
// request id comes from the agent: with the conversation in the key, no
// id it picks can name another conversation's card on a platform whose
// dedup spans conversations (Discord's nonce is per bot).
func CardIdem(conv, id string) string { return "card:" + conv + ":" + id }

// Observer sees conversations as they happen, beside their platform: the
// terminals attached with `bridge attach` (bridges/features/handoff). Its methods
// are called on the conversation's worker: they must return at once
// (hand the value on without blocking, dropping it when the reader is
// slow) and must not call back into the core.
type Observer interface {
	// AgentEvent is each event of the conversation's live agent.
	AgentEvent(key bridges.ConversationKey, ev streamjson.Event)
	// Shown is each notice, card and card update the conversation shows
	// (a card carries CardID and, while open, Buttons).
	Shown(key bridges.ConversationKey, m bridges.Message)
	// Sent is each message handed to the agent: the platform message id
	// it came with, its author's name (or id; "" for a schedule's run)
	// and the text the agent got.
	Sent(key bridges.ConversationKey, msgID, from, text string)
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

// UploadsDir is the directory, inside a session's private state
// (data_dir/sessions/<id>), where the files people send are saved for the
// agent (bridges/features/uploads); the sandbox lets the agent see it at the same
// path.
const UploadsDir = "uploads"

// SpendGate enforces the bots' spend limits (config limits; bridges/features/spend
// implements it). Its methods may block on the store; safe for concurrent use.
type SpendGate interface {
	// Admit decides whether ledger message msgID of user (userName) may go
	// to bot's agent at now: ok=false with the refusal to post when a budget
	// is used up; notices are the texts to post (refusal, warnings). person
	// says a person wrote it (an admin's exemption does not follow a
	// schedule). A message admitted counts as a turn until its ledger row
	// is final (its usage is recorded by then). An error means nothing was
	// checked: the message stays pending.
	Admit(ctx context.Context, bot *config.Bot, msgID, user, userName string, person bool, now time.Time) (ok bool, notices []string, err error)
	// Left is the !cost lines of what user has left of bot's budgets, ""
	// when the bot has no limit.
	Left(ctx context.Context, bot *config.Bot, user string, now time.Time) (string, error)
}

// ToolServer is the name of the bridge's MCP server as the agent sees it.
const ToolServer = toolconv.ServerName

// AgentTools are the bridge's MCP tools for the agent processes: the
// built-in ones and the ones features register (bridges/features/agenttools.New).
type AgentTools interface {
	// Server builds the MCP server for one conversation's agent process.
	// It must serve the tools List names, act on conv only, and may
	// implement agents.WorkdirMover.
	Server(conv toolconv.Conversation) agent.MCPServer
	// List names the tools, in the order the agent sees them, and how a
	// call of each reads on the tool line.
	List() toolconv.Tools
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
	Files    []byte // encodeFiles (attachments.go)
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

// Person is who wrote a message or a command: a person's platform user
// id and display name.
type Person struct{ ID, Name string }

// elicitationResponder is the optional ability of an agents.Session
// (*agent.Session has it) to answer an elicitation request.
type elicitationResponder interface {
	RespondElicitation(ctx context.Context, requestID, action string, content map[string]any) error
}

// backgroundLister is the optional ability of an agents.Session
// (*agent.Session has it) to list its running background tasks.
type backgroundLister interface {
	BackgroundTasks() []streamjson.BackgroundTask
}
