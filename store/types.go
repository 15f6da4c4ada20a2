package store

import (
	"github.com/agentbridge/agentbridge/store/convstore"
	"github.com/agentbridge/agentbridge/store/coord"
	"github.com/agentbridge/agentbridge/store/dbcopy"
	"github.com/agentbridge/agentbridge/store/schedstore"
	"github.com/agentbridge/agentbridge/store/sqldb"
	"github.com/agentbridge/agentbridge/store/webstore"
)

// The store's types, under the names callers use; each is defined by the
// repository that keeps it.

// Conversations and their ledger (package convstore).
type (
	ConversationKey  = convstore.ConversationKey
	Conversation     = convstore.Conversation
	SessionInfo      = convstore.SessionInfo
	InboxMessage     = convstore.InboxMessage
	InboxState       = convstore.InboxState
	InboxMark        = convstore.InboxMark
	Origin           = convstore.Origin
	OutboxMessage    = convstore.OutboxMessage
	OutboxState      = convstore.OutboxState
	OutboxBotSummary = convstore.OutboxBotSummary
	Approval         = convstore.Approval
	Decision         = convstore.Decision
	AuditEntry       = convstore.AuditEntry
	Grant            = convstore.Grant
	Usage            = convstore.Usage
	Totals           = convstore.Totals
	DayUsage         = convstore.DayUsage
	SpendQuery       = convstore.SpendQuery
	Spend            = convstore.Spend
	Feedback         = convstore.Feedback
	FeedbackEntry    = convstore.FeedbackEntry
	Rating           = convstore.Rating
	HandoffEvent     = convstore.HandoffEvent
	HandoffAction    = convstore.HandoffAction
)

// Inbox states, in delivery order; the last three are final.
const (
	InboxPending   = convstore.InboxPending
	InboxSent      = convstore.InboxSent
	InboxStarted   = convstore.InboxStarted
	InboxCompleted = convstore.InboxCompleted
	InboxCancelled = convstore.InboxCancelled
	InboxFailed    = convstore.InboxFailed
)

// Origins of ledger messages.
const (
	OriginPerson   = convstore.OriginPerson
	OriginSchedule = convstore.OriginSchedule
	OriginAgent    = convstore.OriginAgent
)

// Outbox states.
const (
	OutboxPending = convstore.OutboxPending
	OutboxPosted  = convstore.OutboxPosted
	OutboxFailed  = convstore.OutboxFailed
)

// Decisions.
const (
	DecisionAllow     = convstore.DecisionAllow
	DecisionAlways    = convstore.DecisionAlways
	DecisionDeny      = convstore.DecisionDeny
	DecisionTimeout   = convstore.DecisionTimeout
	DecisionCancelled = convstore.DecisionCancelled
	DecisionRuleAllow = convstore.DecisionRuleAllow
	DecisionRuleDeny  = convstore.DecisionRuleDeny
	DecisionGrant     = convstore.DecisionGrant
	DecisionExpired   = convstore.DecisionExpired
)

// Ratings.
const (
	RatingGood = convstore.RatingGood
	RatingBad  = convstore.RatingBad
)

const (
	// NoteCommand is the error text the bridge records on a ledger
	// message it consumed as a chat command (convstore.NoteCommand).
	NoteCommand = convstore.NoteCommand
	// MaxSummaryBytes caps a conversation's stored summary.
	MaxSummaryBytes = convstore.MaxSummaryBytes
)

// Schedules (package schedstore).
type (
	Schedule       = schedstore.Schedule
	ScheduleSource = schedstore.ScheduleSource
)

// Schedule sources.
const (
	ScheduleFromConfig = schedstore.ScheduleFromConfig
	ScheduleFromChat   = schedstore.ScheduleFromChat
	ScheduleFromAgent  = schedstore.ScheduleFromAgent
)

// The web console (package webstore).
type (
	WebMessage     = webstore.WebMessage
	WebUpload      = webstore.WebUpload
	WebThread      = webstore.WebThread
	WebThreadQuery = webstore.WebThreadQuery
	WebShare       = webstore.WebShare
	WebSession     = webstore.WebSession
	WebTool        = webstore.WebTool
)

// Roles of a teammate in a shared web conversation.
const (
	WebViewer      = webstore.WebViewer
	WebParticipant = webstore.WebParticipant
	WebOwner       = webstore.WebOwner
)

// Leases and signals (package coord).
type (
	Lease          = coord.Lease
	LeaseHeldError = coord.LeaseHeldError
)

// Resync is what a Listen channel receives in place of signals that may
// have been missed (see coord.Resync).
const Resync = coord.Resync

// The database handle (package sqldb).
type (
	WriteHealth = sqldb.WriteHealth
	Owner       = sqldb.Owner
)

// Driver names, as config's store.driver spells them.
const (
	DriverSQLite   = sqldb.DriverSQLite
	DriverPostgres = sqldb.DriverPostgres
)

// IsFull reports whether err says the database or its directory cannot be
// written (see sqldb.IsFull).
func IsFull(err error) bool { return sqldb.IsFull(err) }

// TableCount is how many rows Copy copied into one table.
type TableCount = dbcopy.TableCount

// Hand-off audit actions.
const (
	HandoffAttach  = convstore.HandoffAttach
	HandoffDetach  = convstore.HandoffDetach
	HandoffExport  = convstore.HandoffExport
	HandoffImport  = convstore.HandoffImport
	HandoffRefused = convstore.HandoffRefused
)
