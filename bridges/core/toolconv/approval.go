package toolconv

import (
	"context"
	"encoding/json"
	"log/slog"

	"github.com/agentbridge/agentbridge/bridges"
)

// Approval is something the agent asked for through a feature's tool that
// people must approve before it happens (bridges/features/schedule's schedule the
// agent asks for): the card bridges/features/cards shows for it
// (Conversation.AskApproval) and what deciding it does. The CLI waits for
// nothing: the tool returned when the card showed. The card is audited
// like a permission card and closes like one (approval_timeout, the agent
// process's end, a restart). Its functions run on the conversation's
// worker.
type Approval struct {
	// ID is the card's id, unique: the audit row's.
	ID string
	// Tool is the qualified name of the tool that asked (Qualified) and
	// Input what it asked: the audit row's.
	Tool  string
	Input json.RawMessage
	// Body is the card's text; Buttons its choices (a bridges.ChoiceAllow
	// and a bridges.ChoiceDeny).
	Body    string
	Buttons []bridges.Button
	// Max is how many approvals of Tool may wait in the conversation at
	// once; Full is the refusal (wrapping ErrRefused) when waiting of
	// them wait already.
	Max  int
	Full func(waiting int) error
	// Opened, when set, runs once the card shows (e.g. to log it).
	Opened func(log *slog.Logger)
	// Expired is the audit row's message when nobody decided within wait.
	Expired func(wait string) string
	// Allow runs when someone who may decide chooses Allow, Deny when
	// they choose Deny; each returns what the decision did.
	Allow, Deny func(ctx context.Context, d Decider) Decision
}

// Decider is who decides an approval, on which card.
type Decider struct {
	ID      string // the person's platform user id
	Mention string // how messages name them
	Card    string // the card's id (Approval.ID)
	Log     *slog.Logger
}

// Decision is what deciding an approval did.
type Decision struct {
	Allowed bool   // recorded as allowed (else as denied)
	Audit   string // the audit row's message
	Status  string // the card's closing line
}
