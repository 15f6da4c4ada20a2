package commands

import (
	"context"
	"log/slog"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core/access"
	"github.com/agentbridge/agentbridge/bridges/core/agents"
	"github.com/agentbridge/agentbridge/bridges/core/worker"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/config/profile"
	"github.com/agentbridge/agentbridge/store"
)

// Conversation is the conversation a command was written in: what a
// command needs of the core's conversation handle (worker.Conv implements
// it; the tests fake it): its fixed facts, the store, and the actions only
// its worker may take. Commands run on that worker, so its methods are
// called there, one at a time; none of them checks authority (Run does).
type Conversation interface {
	Key() bridges.ConversationKey
	// ID is the store's id of the conversation.
	ID() string
	Bot() *config.Bot
	// Profile is the conversation's agent profile.
	Profile() *profile.Agent
	// Store is the store, fenced to the worker's lease.
	Store() *store.Store
	Now() time.Time
	Log() *slog.Logger
	// Notice posts text into the conversation.
	Notice(ctx context.Context, text string)
	// Privately shows text to who only where the platform can (Slack's
	// ephemeral messages, the web console); elsewhere it posts it into
	// the conversation, addressed to who.
	Privately(ctx context.Context, who worker.Person, text string)
	// SessionID is the conversation's agent session id ("" = none yet).
	SessionID() string
	// Access is the bridge's one access decision: a command that reaches
	// another conversation (!sessions, !resume) asks it about that
	// conversation, never about its channel.
	Access() *access.Authority

	// StopTurn interrupts the running turn; running false means nothing
	// ran.
	StopTurn(ctx context.Context) (running bool, err error)
	// NewSession gives the conversation a fresh session, cancelling the
	// messages the old one had not finished (by names who asked), and
	// returns what became of the old session's worktree ("" for nothing
	// to tell). worker.ErrStarting: the agent is starting. Other errors are the
	// store's.
	NewSession(ctx context.Context, by string) (worktree string, err error)
	// Agents lists the profiles the conversation may run on — the bot's
	// default first, then its bots[].agents — and the one it runs now.
	Agents() (names []string, current string)
	// SwitchAgent moves the conversation to profile name, one of Agents
	// (Run checked that who may write here): it stops the agent, stores
	// the profile with a fresh session id (the model and mode overrides
	// are cleared, the conversation's grants removed by by) and the next
	// turn starts there, fresh. It returns more to tell ("" for nothing):
	// the grants removed, what became of the old session's worktree.
	// worker.ErrWorking, worker.ErrStarting or worker.ErrResuming while the
	// agent is working (a turn, a message in flight, an open card, a
	// background task), starting, or a resume is under way; other errors
	// are the store's.
	SwitchAgent(ctx context.Context, name, by string) (worktree string, err error)
	// Model is the model the agent runs ("" = the CLI's default).
	Model() string
	// SetModel stores the conversation's model ("" = the profile's) and
	// tells the running agent; live is the agent's refusal (the model is
	// stored anyway and applies at its restart), err the store's.
	SetModel(ctx context.Context, model string) (live, err error)
	// Mode is the permission mode the agent runs in.
	Mode() string
	// SetMode stores the conversation's permission mode and applies it:
	// at once, or, entering or leaving bypassPermissions (which needs a
	// restart), after the current turn (later). live is the running
	// agent's refusal (the mode is stored anyway), err the store's.
	SetMode(ctx context.Context, mode string) (later bool, live, err error)
	// AgentChoices is what the agent offers of kind ("mode" or "model")
	// when it chooses its own (an agent of kind acp); Own is false for the
	// Claude Code CLI. SetMode and SetModel store and apply one of them.
	AgentChoices(kind string) agents.Choices
	// Status is the !status text for who.
	Status(ctx context.Context, who worker.Person) string
	// Rules runs "!rules" with its argument words (lists the rules and
	// grants; "rm N" removes a grant: who is an admin, Run checked).
	Rules(ctx context.Context, args []string, who worker.Person)
	// BudgetLeft is the !cost lines of what user has left of the bot's
	// budgets, "" when it has no limit.
	BudgetLeft(ctx context.Context, user string) (string, error)
	// ResumeState says whether a session can be resumed here now: nil, or
	// worker.ErrResuming or worker.ErrWorking.
	ResumeState() error
	// Resume asks the conversation that holds target to give its session
	// up to this one; the answer arrives later on this worker, which
	// tells the conversation how it went. An error means the request
	// could not be made.
	Resume(ctx context.Context, target store.SessionInfo, who worker.Person) error
}

var _ Conversation = worker.Conv{}
