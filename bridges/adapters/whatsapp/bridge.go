// Package whatsapp is the WhatsApp side of the bridge, built on
// go.mau.fi/whatsmeow: the bot is a linked device of a phone's account.
//
// The device lifecycle: the narrow client interface (waClient) the rest
// of the package talks to, the per-bot device store (OpenDeviceStore: a
// SQLite file; with store.driver: postgres a schema of its own in the
// bridge's database, pgstore.go, so that any replica reaches it),
// the log adapter (Logger), linking a device (Link) and the start-up
// check that a bot is linked (CheckLinked).
//
// The message adapter (Bridge, made by Open over a real client or by New
// over any waClient) implements bridges.Platform, Typer and FileFetcher:
// inbound.go turns *events.Message into Inbound messages and card answers
// (private chats; groups only when the bot is mentioned or quoted; LIDs
// mapped to phone numbers before the access check; strangers cause no
// side effect at all), outbound.go posts rendered (format.go) and split
// (split.go) answers quoting the user's message, errors.go refuses to
// write to a chat that never wrote to the bot, typing.go shows
// "composing", files.go downloads media, run.go connects, reports the
// connection state (bridges.ReportState) and ends with a bridges.Failure
// saying what to do on permanent disconnects; with replicas it connects
// only while its bridges.ConnGate lets it (SetConnGate). WhatsApp has no buttons for
// normal accounts (cards.go): the core gives a card's choices as
// Message.Buttons, which are listed as numbered choices with fixed
// meanings (1 Allow, 2 Deny, 3 Always allow) and answered by a number (the
// core decides the card the reply quotes, found in its store even after a
// restart, or its newest card), a 👍 / 👎 reaction on the card, or
// (approvals: poll) a vote in a poll.
package whatsapp

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/internal/lru"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/internal/tasks"
	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/store"
	"go.mau.fi/whatsmeow/store/sqlstore"
	"go.mau.fi/whatsmeow/types"
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
	recoverWait   time.Duration
	recov         recoveries
	refresh       func(ctx context.Context) (bool, error)
	refreshed     atomic.Bool // the version was refreshed once already
	lookedUp      atomic.Bool // the access list's numbers were looked up (Open)
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
	gate      bridges.ConnGate // nil: connect at once (SetConnGate)

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
	_ bridges.ConnGated    = (*Bridge)(nil)
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

// Open makes the adapter of a configured WhatsApp bot over a real client
// of its linked device: it checks that the bot's device store holds a
// linked device (CheckLinked: the error says how to link it), locks the
// store against a second process (LockDeviceStore: ErrDeviceInUse), opens
// it, turns on the decrypted-event buffer and synchronous acks (a message
// is acknowledged only once the core recorded it), the retry message store
// and re-requests from the phone, and looks up the bot's phone numbers
// (access lists) once connected. whatsmeow's own reconnects are off: Run
// reconnects. The returned close function closes the device store once
// Run has returned, and releases the lock. cfg.Path is named in the
// relink command a logged-out bot asks for. This is the constructor every
// adapter has (bridges/app's list of platforms calls it).
func Open(ctx context.Context, cfg *config.Config, bot *config.Bot, log *slog.Logger) (*Bridge, func() error, error) {
	configPath := cfg.Path
	var wc *Config
	if bot != nil {
		wc, _ = bot.Settings.(*Config)
	}
	if wc == nil {
		return nil, nil, fmt.Errorf("whatsapp open: %w: not a WhatsApp bot", ErrBadMessage)
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	container, unlock, err := openDevices(ctx, bot.Name, wc.DeviceStore, PGDevicesOf(cfg, bot.Name), configPath, log)
	if err != nil {
		return nil, nil, err
	}
	dev, err := container.GetFirstDevice(ctx)
	if err != nil || dev.ID == nil {
		_ = container.Close()
		_ = unlock()
		return nil, nil, fmt.Errorf("whatsapp device store %s: no linked device (%v)", wc.DeviceStore, err)
	}
	cli := whatsmeow.NewClient(dev, Logger(log, "Client"))
	cli.EnableDecryptedEventBuffer = true
	cli.SynchronousAck = true
	// Run reconnects (capped back-off, forever): whatsmeow's own
	// reconnect waits 2 s more after every failure, without a cap.
	cli.EnableAutoReconnect = false
	// As the reference bridge (mautrix-whatsapp) does: keep sent messages
	// for recipients' retry receipts across restarts (else a phone that
	// failed to decrypt shows "Waiting for this message" for ever), and ask
	// the bot's phone for messages this device could not decrypt.
	cli.UseRetryMessageStore = true
	cli.AutomaticMessageRerequestFromPhone = true
	b := New(Options{
		Bot:    bot.Name,
		Client: cli,
		Self:   func() (types.JID, types.JID) { return cli.Store.GetJID(), cli.Store.GetLID() },
		LIDs:   cli.Store.LIDs,
		Log:    log,
		Phones: accessPhones(bot.Access),

		Approvals:      wc.Approvals,
		ConfigPath:     configPath,
		RefreshVersion: refreshWAVersion,
	})
	closeAll := func() error { return errors.Join(container.Close(), unlock()) }
	return b, closeAll, nil
}

// openDevices opens the device store of a linked bot: its SQLite file
// (checked first without creating it, then locked against a second
// process: ErrDeviceInUse), or its schema in PostgreSQL when pg is set
// (there the connection lease of replicas, or the one bridge per database,
// keeps a second process off the device). A bot that is not linked is an
// error wrapping ErrNotLinked that names the command to run. unlock
// releases the file's lock once the container is closed.
func openDevices(ctx context.Context, bot, file string, pg PGDevices, configPath string, log *slog.Logger) (c *sqlstore.Container, unlock func() error, err error) {
	if pg.DSN == "" {
		if _, err := CheckLinked(ctx, bot, file, configPath, log); err != nil {
			return nil, nil, err // read only: creates nothing
		}
		unlock, err := LockDeviceStore(file)
		if err != nil {
			return nil, nil, err
		}
		c, err := OpenDeviceStore(ctx, file, log)
		if err != nil {
			return nil, nil, errors.Join(err, unlock())
		}
		return c, unlock, nil
	}
	c, err = openPGDevices(ctx, pg, log)
	if err != nil {
		return nil, nil, err
	}
	dev, err := c.GetFirstDevice(ctx)
	if err == nil && dev.ID == nil {
		err = fmt.Errorf("whatsapp bot %q is %w to a phone yet in its device store (%s; with store.driver: postgres "+
			"the device lives in the database, a device linked into a file before must be linked again): "+
			"run `bridge whatsapp-link -config %s -bot %s` first", bot, ErrNotLinked, pg, configPath, bot)
	}
	if err != nil {
		return nil, nil, errors.Join(err, c.Close())
	}
	return c, func() error { return nil }, nil
}

// accessPhones are the phone numbers (entries starting with "+") of an
// access list.
func accessPhones(a config.Access) []string {
	seen := map[string]bool{}
	var out []string
	for _, list := range [][]string{a.Users, a.Approvers, a.Admins} {
		for _, p := range list {
			if len(p) > 1 && p[0] == '+' && !seen[p] {
				seen[p] = true
				out = append(out, p)
			}
		}
	}
	return out
}

// lookUpPhones asks WhatsApp about the configured phone numbers: this
// stores their LID mappings (so that LID senders can be matched) and
// catches typos, which are logged. Run asks once, after the first
// connection (again after a failed lookup), not at every reconnect.
func (b *Bridge) lookUpPhones(ctx context.Context) {
	if len(b.phones) == 0 {
		return
	}
	res, err := b.cli.IsOnWhatsApp(ctx, b.phones)
	if err != nil {
		b.lookedUp.Store(false) // again at the next connection
		b.log.Warn("whatsapp lookup of the access list's numbers failed", "err", err)
		return
	}
	for _, r := range res {
		if !r.IsIn {
			b.log.Warn("a number of the access list is not on WhatsApp", "user", r.Query)
		}
	}
}

// refreshWAVersion fetches WhatsApp Web's current version and makes
// whatsmeow use it (a process-wide setting of the library), reporting
// whether it changed.
func refreshWAVersion(ctx context.Context) (bool, error) {
	v, err := whatsmeow.GetLatestVersion(ctx, &http.Client{Timeout: 30 * time.Second})
	if err != nil {
		return false, fmt.Errorf("whatsapp version: %w", err)
	}
	if *v == store.GetWAVersion() {
		return false, nil
	}
	store.SetWAVersion(*v)
	return true, nil
}
