// Package cards is the card machinery of a conversation: the permission,
// plan, question and MCP-elicitation cards the agent's requests become,
// and the approval cards a feature asks for on the agent's behalf
// (OpenApproval, e.g. bridges/features/schedule's schedule the agent asks for) —
// opening them, clicks and typed answers, who may decide (fail-closed:
// the turn's requesters, approvers and admins), the decisions sent back
// to the CLI, the audit trail, "Always allow" grants and expiry. It acts through Host, which the conversation's worker
// implements (worker.Conv); the core makes a Set per conversation through
// Feature (core.CoreOptions.Cards).
package cards

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core/render"
	"github.com/agentbridge/agentbridge/bridges/core/worker"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/config/profile"
	"github.com/agentbridge/agentbridge/store"
)

// mention names a person in a message.
func mention(p worker.Person) string { return render.Mention(p.Name, p.ID) }

// Host is the conversation the cards belong to, as its worker offers it
// (worker.Conv implements it). Every method is called on that worker, one at
// a time.
type Host interface {
	Log() *slog.Logger
	// ID is the store's id of the conversation; Key its platform key.
	ID() string
	Key() bridges.ConversationKey
	Bot() *config.Bot
	Profile() *profile.Agent
	Limits() bridges.Limits
	MaxRunes() int
	Now() time.Time
	// Store is the store, fenced to the worker's lease.
	Store() *store.Store
	// Notice posts text into the conversation.
	Notice(ctx context.Context, text string)
	// Post posts m at once (urgent, within the channel's budget).
	Post(ctx context.Context, m bridges.Message) (bridges.MessageRef, error)
	// EditOrPost edits ref to m at once, or posts instead where ref can no
	// longer be edited.
	EditOrPost(ctx context.Context, ref bridges.MessageRef, m, instead bridges.Message) (bridges.MessageRef, error)
	// ReplyPrivately answers the clicker of a only.
	ReplyPrivately(ctx context.Context, a bridges.Action, text string)
	// Record runs a store write in the conversation's order of writes,
	// logging (and, on a full disk, retrying) a failure.
	Record(ctx context.Context, what string, do func(ctx context.Context) error, attrs ...any)
	// CountApproval counts a decision in the metrics.
	CountApproval(decision string)
	// IsApprover reports whether user may decide any card of the bot
	// (its approvers and admins).
	IsApprover(user string) bool
	// Requesters are who may decide the current turn's cards besides the
	// approvers; ScheduledRun names the schedule whose run it is ("").
	Requesters() map[string]worker.Person
	ScheduledRun() string
	// Live reports whether an agent process is live; Respond answers its
	// permission request id.
	Live() bool
	Respond(ctx context.Context, id string, d streamjson.Decision) error
	// CanElicit reports whether the live agent can answer elicitations;
	// RespondElicitation answers one (nothing without that ability).
	CanElicit() bool
	RespondElicitation(ctx context.Context, id, action string, content map[string]any) error
	// StartTimer arms card id's approval timeout: when it fires, the
	// worker calls Expire(id). StopTimer disarms it.
	StartTimer(d time.Duration, id string)
	StopTimer(id string)
	// BeginTurn starts a turn if none runs. BeforeCard closes the turn's
	// live message so that the rest of the turn shows below the card.
	BeginTurn(ctx context.Context)
	BeforeCard(ctx context.Context)
	// Note adds a line to the turn's live message.
	Note(ctx context.Context, line string)
	// ToolWaiting and ToolDecided show on the live message that the tool
	// call toolUseID waits for a decision, or was allowed or denied.
	ToolWaiting(ctx context.Context, toolUseID string)
	ToolDecided(ctx context.Context, toolUseID string, allowed bool)
	// ToolInput is the input of the turn's tool call toolUseID (nil if
	// unknown).
	ToolInput(toolUseID string) json.RawMessage
	// RestartSoon restarts a live agent process (resuming its session) so
	// that it forgets a removed grant: now, or when the current turn ends
	// (later).
	RestartSoon(ctx context.Context) (later bool)
}

var _ Host = worker.Conv{}

// Feature is the cards as a feature of the core (CoreOptions.Cards): it
// makes each conversation's Set.
type Feature struct{}

// New is the empty card set of c's conversation.
func (Feature) New(c worker.Conv) worker.CardSet { return New(c) }

var _ worker.CardSet = (*Set)(nil)

// Set is a conversation's open cards. It is owned by the conversation's
// worker: not safe for concurrent use.
type Set struct {
	h    Host
	open map[string]*card // by id (the CLI's request id)
	seq  int              // opening order
}

// New is the empty set of cards of h's conversation.
func New(h Host) *Set {
	return &Set{h: h, open: make(map[string]*card)}
}

// Len is the number of open cards.
func (s *Set) Len() int { return len(s.open) }

// Operator applies an operator's decision (from the web console's
// operator view) to card a.CardID; it returns a problem to tell the
// operator, or "". Questions are answered in the conversation only.
func (s *Set) Operator(ctx context.Context, a bridges.Action) string {
	cd := s.open[a.CardID]
	who := worker.Person{ID: a.UserID, Name: a.UserName}
	switch {
	case cd == nil:
		return "This request is no longer open."
	case cd.kind == cardQuestion:
		return "Questions are answered in the conversation."
	case cd.kind == cardApproval:
		return s.decideApproval(ctx, cd, a.Choice, who)
	default:
		return s.decide(ctx, cd, a.Choice, who)
	}
}
