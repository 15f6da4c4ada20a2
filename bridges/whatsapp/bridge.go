package whatsapp

import (
	"cmp"
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/internal/lru"
	"github.com/agentbridge/agentbridge/bridges/internal/tasks"
)

// Memory sizes of the adapter's bounded caches.
const (
	seenCap     = 4096 // message ids already handed to the core (dedupe)
	sentCap     = 2048 // messages the bot sent (quotes of them, reactions on cards)
	receivedCap = 2048 // accepted messages (for quoting them) and their media
)

// Options configure a Bridge.
type Options struct {
	Bot    string   // configured bot name (ConversationKey.Bot)
	Client waClient // the connected (or connectable) client of the linked device
	// Self returns the bot's own phone-number JID and LID (with or
	// without device parts; either may be empty): Store.GetJID and
	// Store.GetLID of the real client.
	Self func() (pn, lid types.JID)
	LIDs lidLookup // LID → phone number mappings (Store.LIDs)
	Log  *slog.Logger
	// Phones are the phone numbers (E.164) of the access lists, looked
	// up once connected (stores their LID mappings, logs typos).
	Phones []string
	// Reconnect is the back-off between failed connection attempts (zero:
	// the defaults of bridges.Backoff); Run never gives up on a transient
	// failure.
	Reconnect bridges.Backoff
	// SendInterval is the least time between two messages to one chat;
	// 0 = 500 ms (at most two a second).
	SendInterval time.Duration
	// TypingRefresh is how often a "composing" presence is repeated while
	// the agent works (WhatsApp clears it after ~25 s); 0 = 10 s.
	TypingRefresh time.Duration
	// Approvals is ApprovalsPoll to send a card's choices
	// as a poll too; otherwise numbered replies and reactions only.
	Approvals string
	// ConfigPath is the -config argument, named in the relink command
	// that a logged-out bot asks for.
	ConfigPath string
	// Transcriber reads voice notes and audio; nil (today: config
	// transcription is not wired yet) answers them with a request to type.
	Transcriber Transcriber
	// RecoverWait is how long an undecryptable message may take to arrive
	// again (re-requested from the phones) before its sender is asked to
	// send it again; 0 = 2 minutes.
	RecoverWait time.Duration
	// Now is the clock of the phone-offline warning; nil = time.Now.
	Now func() time.Time
	// RefreshVersion fetches WhatsApp Web's current version and makes the
	// client use it, reporting whether it changed; Run calls it once when
	// WhatsApp says the client is outdated, and reconnects when it did.
	// nil: outdated is a failure at once (remedy upgrade).
	RefreshVersion func(ctx context.Context) (changed bool, err error)
}

// Bridge is one WhatsApp bot's adapter (bridges.Platform, Editor, Typer
// and FileFetcher). WhatsApp users get whole answers, not a stream: the
// Editor updates progress lines and decided cards only. It has no
// buttons: cards list numbered choices, answered by a number (quoting the
// card or not) or a 👍 / 👎 reaction on the card.
type Bridge struct {
	bot  string
	cli  waClient
	self func() (types.JID, types.JID)
	lids lidLookup
	log  *slog.Logger

	typingRefresh time.Duration
	approvals     string
	configPath    string
	transcriber   Transcriber
	recoverWait   time.Duration
	recov         recoveries
	refresh       func(ctx context.Context) (bool, error)
	refreshed     atomic.Bool // the version was refreshed once already
	lookedUp      atomic.Bool // the access list's numbers were looked up (open.go)
	now           func() time.Time
	phoneSeen     atomic.Int64 // Unix ns: the bot's phone was last seen (phone.go), or Run started
	phoneWarned   atomic.Bool  // the phone-offline warning was given since
	outdated      chan struct{}
	phones        []string
	reconnect     bridges.Backoff
	fatal         chan error   // a permanent failure (*bridges.Failure) ends Run
	redial        chan bool    // the event handler asks Run to connect again (true: drop the socket first)
	failures      atomic.Int32 // failed connection attempts since WhatsApp last accepted the login
	up            atomic.Bool  // WhatsApp accepted the login (events.Connected) and the connection was not lost since
	pace          *pacer

	seen     *lru.Cache[string, bool]        // dedupe keys of accepted messages
	sent     *lru.Cache[string, sentMsg]     // by message id
	received *lru.Cache[string, receivedMsg] // by message id

	mu        sync.Mutex
	h         bridges.Handler
	typing    map[string]context.CancelFunc  // refreshing "composing" per chat
	unread    map[string][]types.MessageInfo // accepted messages not yet marked read, per chat (typing.go)
	timers    map[string]uint32              // disappearing-message timers in seconds, per chat (disappearing.go)
	lidGroups map[string]bool                // groups addressed by LID (disappearing.go)
	runCtx    context.Context

	// tasks own the goroutines Run's events start (typing refreshes, the
	// number lookup); Run waits for them before it returns.
	tasks tasks.Group
}

// sentMsg is a message the bot sent: what a quote of it needs, and the
// card it belongs to with the card's buttons (none: answered by text).
type sentMsg struct {
	chat    types.JID
	text    string
	cardID  string
	buttons []bridges.Button
	ref     string // the MessageRef.ID Post returned for the message this is a part (or the poll) of
}

// receivedMsg is an accepted inbound message: what quoting it needs.
type receivedMsg struct {
	chat   types.JID
	sender types.JID // as it arrived (non-AD)
	msg    *waE2E.Message
	media  whatsmeow.DownloadableMessage // its attachment, or nil
}

var (
	_ bridges.Platform     = (*Bridge)(nil)
	_ bridges.Editor       = (*Bridge)(nil)
	_ bridges.FileUploader = (*Bridge)(nil)
	_ bridges.Typer        = (*Bridge)(nil)
	_ bridges.FileFetcher  = (*Bridge)(nil)
)

// New returns the adapter; Run connects it.
func New(o Options) *Bridge {
	log := o.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	self := o.Self
	if self == nil {
		self = func() (types.JID, types.JID) { return types.EmptyJID, types.EmptyJID }
	}
	refresh := o.TypingRefresh
	if refresh <= 0 {
		refresh = 10 * time.Second
	}
	now := o.Now
	if now == nil {
		now = time.Now
	}
	return &Bridge{
		now: now,
		bot: o.Bot, cli: o.Client, self: self, lids: o.LIDs, log: log.With("bot", o.Bot, "platform", Name),
		typingRefresh: refresh,
		approvals:     o.Approvals,
		configPath:    o.ConfigPath,
		transcriber:   o.Transcriber,
		recoverWait:   cmp.Or(o.RecoverWait, 2*time.Minute),
		refresh:       o.RefreshVersion,
		outdated:      make(chan struct{}, 1),
		phones:        append([]string(nil), o.Phones...),
		reconnect:     o.Reconnect,
		fatal:         make(chan error, 1),
		redial:        make(chan bool, 1),
		pace:          newPacer(cmp.Or(o.SendInterval, 500*time.Millisecond)),
		seen:          lru.New[string, bool](seenCap),
		sent:          lru.New[string, sentMsg](sentCap),
		received:      lru.New[string, receivedMsg](receivedCap),
		typing:        map[string]context.CancelFunc{},
		unread:        map[string][]types.MessageInfo{},
		timers:        map[string]uint32{},
		lidGroups:     map[string]bool{},
	}
}

// Limits implements bridges.Platform: no buttons (numbered choices);
// answers posted whole (WholeAnswers: a new message notifies, an edit does
// not), with edits for a long turn's one progress line (every 30 s) and
// for decided cards within the edit window; the core splits CommonMark a
// little below the rendered limit. Run reports the connection state.
func (b *Bridge) Limits() bridges.Limits {
	return bridges.Limits{
		Title:            "WhatsApp",
		MaxMessageRunes:  maxTextRunes - 200, // rendering adds a little; splitText cuts again
		CanButtons:       false,
		EditInterval:     2 * time.Second, // pacing: at most a message every 2 s per chat
		EditMaxAge:       editMaxAge,
		WholeAnswers:     true,
		ProgressInterval: 30 * time.Second,
		ReportsState:     true,
	}
}
