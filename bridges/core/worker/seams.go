package worker

import (
	"context"
	"errors"
	"time"

	"github.com/agentbridge/agentbridge/agent"
	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core/toolconv"
	"github.com/agentbridge/agentbridge/bridges/core/worker/timer"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/store"
)

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

// Clock is the core's source of time and timers; tests use a fake one.
type Clock interface {
	Now() time.Time
	// AfterFunc calls f in its own goroutine after d. Stop reports whether
	// it prevented the call.
	AfterFunc(d time.Duration, f func()) timer.Timer
}

// realClock is Clock over package time.
type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) AfterFunc(d time.Duration, f func()) timer.Timer { return time.AfterFunc(d, f) }

// RealClock is the real time, the default Clock.
func RealClock() Clock { return realClock{} }

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

// Person is who wrote a message or a command: a person's platform user
// id and display name.
type Person struct{ ID, Name string }
