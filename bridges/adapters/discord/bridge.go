// Package discord is the Discord adapter of agentbridge: a gateway bot
// (bwmarrin/discordgo) that implements bridges.Platform plus the optional
// Typer and FileFetcher abilities.
//
// # Conversations
//
// A message in a guild channel that mentions the bot starts a public
// thread on that message (named from its first words); the thread is the
// conversation. On Discord a thread is itself a channel, and its id equals
// the id of the message it was started from. Conversation keys are:
//
//   - thread in a guild: Key{Bot, Channel: parent channel id, Thread: thread id}
//     (Post and Edit address the thread id; access rules see the parent);
//   - DM: Key{Bot, Channel: DM channel id, Thread: ""};
//   - a guild channel where the thread could not be created (missing
//     permission): Key{Bot, Channel: channel id, Thread: ""}.
//
// Every user message inside a thread is delivered when it mentions the bot
// or when Handler.Owns says the bot owns that thread; in DMs every message
// is delivered. Messages of bots (the bot itself included), webhooks and
// system messages are ignored. The bot mention is stripped from the text.
// A reply (message_reference with the referenced_message Discord includes)
// carries the replied-to message as Inbound.ReplyTo and Inbound.Quoted
// ("AUTHOR wrote:" and its text), its attachments as Files named
// "quoted-NAME".
//
// # Strangers
//
// A user the bot's access rules refuse (Handler.Allowed) gets no thread:
// their mention reaches the core bare (no text, name or files) and keyed
// by the channel, so that it is counted. The adapter has no Ephemeral
// ability (Discord shows private messages only in answer to an
// interaction), so a stranger's message is answered by silence. A
// stranger's click is still acknowledged and answered privately by the
// core like anyone's.
//
// # Cards
//
// A Message with Buttons becomes a Components V2 message (components.go):
// a container with the text and the buttons, in action rows of at most 5
// buttons, at most 5 rows, labels cut to 80 characters (a choice longer
// than 40 characters is a section: its text with a button beside it), and
// custom_id = "c:" + CardID + ":" + Button.ID (at most 100 characters;
// Button.ID must not contain ':'). Edits of a card keep it a V2 message. A click is acknowledged at once with a
// deferred update (interaction response type 6), then passed to
// Handler.HandleAction; Action.Reply sends an ephemeral follow-up (flag 64)
// that only the clicker sees.
//
// # Delivery guarantees
//
// discordgo resumes the gateway session after op 7, op 9 and dropped
// sockets (Run drives the reconnects); replayed events are dropped by a
// bounded memory of recent message and interaction ids, so each message
// reaches Handler.HandleMessage at most once per process (the core's ledger
// deduplicates across restarts). Messages are delivered one at a time, in
// gateway order. Discord does not redeliver events sent while the bridge
// was not connected at all.
//
// # Files
//
// Every adapter has the same files for the same roles (bridges/adapters/slack,
// bridges/adapters/web), keeps its bounded memories in bridges/internal/lru, and
// tests each file in the _test.go file of the same name (helpers_test.go
// holds the test kit, bench_test.go the benchmarks).
//
// files:
//
//   - bridge.go: Bridge, New and Open, Limits, the abilities offered, the
//     api_url rewrite of REST calls and the invite URL.
//   - run.go: Run: the event handlers, the ordered message queue and its
//     worker, the gateway connect and resume loop (through a
//     bridges.ConnGate with replicas: SetConnGate), and the dialer that
//     reads the close codes discordgo hides.
//   - inbound.go: MESSAGE_CREATE to bridges.Inbound: routing, threads
//     started on a mention, strangers, names, attachments and replies.
//   - outbound.go: Post, Edit, StartThread and the cards' buttons.
//   - format.go: CommonMark to Discord markdown.
//   - split.go: splitting and cutting converted text to Discord's limits.
//   - typing.go: SetTyping and its renewals.
//   - files.go: FetchFile (attachments in) and UploadFile (files out).
//   - errors.go: sentinel errors, which errors are permanent, and the
//     gateway failures that stop Run with what to do.
//
// Files only Discord needs:
//
//   - config.go: bots[].discord settings and schedule targets.
//   - interactions.go: button clicks (INTERACTION_CREATE): acknowledged at
//     once on their own goroutine, then given to the core.
//   - idem.go: the create-message nonce that makes a retried Post show
//     once.
package discord

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/internal/lru"
	"github.com/agentbridge/agentbridge/config"
	"github.com/bwmarrin/discordgo"
)

// Compile-time checks of the abilities this adapter offers.
var (
	_ bridges.Platform    = (*Bridge)(nil)
	_ bridges.Editor      = (*Bridge)(nil)
	_ bridges.Typer       = (*Bridge)(nil)
	_ bridges.FileFetcher = (*Bridge)(nil)
	_ bridges.ConnGated   = (*Bridge)(nil)
)

const (
	// maxContentRunes is Discord's hard limit for message content.
	maxContentRunes = 2000
	// maxMessageRunes is what the core is told (Limits.MaxMessageRunes):
	// a text longer than maxContentRunes goes out as one Components V2
	// message of up to maxV2Text characters (components.go), so the core
	// splits at a little below that limit, leaving room for markup
	// conversion.
	maxMessageRunes = 3800
	// maxButtons is 5 action rows of 5 buttons.
	maxButtons    = 25
	buttonsPerRow = 5
	maxLabelRunes = 80
	maxCustomID   = 100
	// customIDPrefix marks the adapter's card buttons.
	customIDPrefix = "c:"

	// gatewayIntents: guild and DM messages with their content, and guild
	// create events (channels and threads for the state cache).
	gatewayIntents = discordgo.IntentsGuilds | discordgo.IntentsGuildMessages |
		discordgo.IntentsDirectMessages | discordgo.IntentsMessageContent

	recentIDs    = 4096 // replayed-event memory
	channelInfos = 4096 // channel → parent/thread cache
)

// Bridge is one configured Discord bot. Create it with New, then call Run
// once; Post, Edit, SetTyping and FetchFile may be called concurrently,
// before, during and after Run.
type Bridge struct {
	name    string
	log     *slog.Logger
	session *discordgo.Session
	gateway *gatewayDialer
	http    *http.Client // downloads (no credentials are sent)

	// Tunables, fixed after New (tests in this package shorten them).
	typingEvery  time.Duration   // re-send the typing indicator this often
	typingMax    time.Duration   // stop an indicator nobody turned off
	ackTimeout   time.Duration   // budget of the interaction acknowledgement
	openTimeout  time.Duration   // budget of one gateway handshake
	reconnect    bridges.Backoff // between failed gateway connection attempts
	deliverTries int             // HandleMessage attempts per message
	deliverPause time.Duration   // first pause between attempts (doubles)
	queueSize    int             // buffer of the ordered message queue

	recent *lru.Cache[string, struct{}] // message and interaction ids already handled
	chans  *lru.Cache[string, chanInfo] // channel id → kind and parent
	v2     *lru.Cache[string, struct{}] // ids of the Components V2 messages posted (components.go)

	mu      sync.Mutex
	botID   string
	running bool
	runCtx  context.Context  // valid while running
	gate    bridges.ConnGate // nil: connect at once (SetConnGate)
	typers  map[string]*typer
	wg      sync.WaitGroup // goroutines started by handlers (typing, clicks)
}

// Open is the constructor every adapter has (bridges/app's list of
// platforms calls it): New for bot, which holds nothing to release (the
// returned close function does nothing). ctx and cfg are not used.
func Open(_ context.Context, _ *config.Config, bot *config.Bot, logger *slog.Logger) (*Bridge, func() error, error) {
	b, err := New(bot, logger)
	if err != nil {
		return nil, nil, err
	}
	return b, func() error { return nil }, nil
}

// New creates the adapter for bot (whose Discord section must be set). It
// does not connect: Run does. logger receives the adapter's logs, with
// the bot name attached; nil discards them.
func New(bot *config.Bot, logger *slog.Logger) (*Bridge, error) {
	var dc *Config
	if bot != nil {
		dc, _ = bot.Settings.(*Config)
	}
	if dc == nil {
		return nil, errors.New("discord: bot has no discord section")
	}
	token := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(dc.Token), "Bot "))
	if token == "" {
		return nil, fmt.Errorf("discord bot %q: token is empty", bot.Name)
	}
	apiURL := dc.APIURL
	if apiURL == "" {
		apiURL = DefaultAPIURL
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}

	base := http.DefaultTransport.(*http.Transport).Clone()
	// The core's write guard is asked as each REST request leaves (bridges.GuardWrites).
	guarded := bridges.GuardWrites(base)
	var rt = guarded
	if apiURL != discordgo.EndpointAPI {
		t, err := newRewriteTransport(discordgo.EndpointAPI, apiURL, guarded)
		if err != nil {
			return nil, fmt.Errorf("discord bot %q: %w", bot.Name, err)
		}
		rt = t
	}

	s, err := discordgo.New("Bot " + token)
	if err != nil {
		return nil, fmt.Errorf("discord bot %q: create session: %w", bot.Name, err)
	}
	s.Client = &http.Client{Transport: rt, Timeout: 20 * time.Second}
	s.Identify.Intents = gatewayIntents
	s.SyncEvents = true              // handlers run in gateway order; they only enqueue
	s.ShouldReconnectOnError = false // Run drives reconnects and sees why they fail
	s.LogLevel = -1                  // discordgo would log through the global log package
	s.State.MaxMessageCount = 0
	s.State.TrackPresences = false
	s.State.TrackMembers = false
	s.State.TrackVoice = false
	s.State.TrackEmojis = false
	s.State.TrackStickers = false

	g := &gatewayDialer{}
	s.Dialer = g.dialer(gatewayProxied())

	return &Bridge{
		name:         bot.Name,
		log:          logger.With("bot", bot.Name, "platform", Name),
		session:      s,
		gateway:      g,
		http:         &http.Client{Transport: base, Timeout: 2 * time.Minute},
		typingEvery:  8 * time.Second,
		typingMax:    30 * time.Minute,
		ackTimeout:   2500 * time.Millisecond,
		openTimeout:  time.Minute,
		deliverTries: 4,
		deliverPause: 250 * time.Millisecond,
		queueSize:    1024,
		recent:       lru.New[string, struct{}](recentIDs),
		chans:        lru.New[string, chanInfo](channelInfos),
		v2:           lru.New[string, struct{}](v2Remembered),
		typers:       map[string]*typer{},
	}, nil
}

// gatewayProxied reports whether an HTTP proxy is configured for the
// Discord gateway host.
func gatewayProxied() bool {
	req, err := http.NewRequest(http.MethodGet, "https://gateway.discord.gg/", nil)
	if err != nil {
		return false
	}
	u, err := http.ProxyFromEnvironment(req)
	return err == nil && u != nil
}

// Limits implements bridges.Platform.
func (b *Bridge) Limits() bridges.Limits {
	return bridges.Limits{
		Title:           "Discord",
		MaxMessageRunes: maxMessageRunes,
		CanButtons:      true,
		EditInterval:    time.Second,
		MaxButtons:      maxButtons,
		MaxUploadBytes:  maxUploadBytes,
		ReportsState:    true,
	}
}

// BotUserID is the bot's Discord user id, known once Run has connected
// ("" before).
func (b *Bridge) BotUserID() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.botID
}

// channelOf is the Discord channel a conversation's messages go to.
func channelOf(k bridges.ConversationKey) string {
	if k.Thread != "" {
		return k.Thread
	}
	return k.Channel
}

// rewriteTransport sends the requests that discordgo addresses to its
// built-in API base (https://discord.com/api/v9/) to the configured
// api_url instead: scheme, host and path prefix are replaced. Other
// requests (CDN downloads, the gateway) pass unchanged.
//
// This is how discord.api_url works without touching discordgo's package
// variables, so several bridges (and parallel tests) can point at
// different servers in one process.
type rewriteTransport struct {
	from *url.URL // discordgo's API base
	to   *url.URL // the configured api_url (ends in "/")
	base http.RoundTripper
}

func newRewriteTransport(from, to string, base http.RoundTripper) (*rewriteTransport, error) {
	f, err := url.Parse(from)
	if err != nil {
		return nil, fmt.Errorf("parse discordgo API base %q: %w", from, err)
	}
	t, err := parseAPIURL(to)
	if err != nil {
		return nil, err
	}
	return &rewriteTransport{from: f, to: t, base: base}, nil
}

// parseAPIURL checks an api_url: absolute http(s), no query, ending in "/".
func parseAPIURL(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("discord api_url %q: %w", s, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("discord api_url %q: want an absolute http(s) URL such as https://discord.com/api/v9/", s)
	}
	if !strings.HasSuffix(u.Path, "/") {
		u.Path += "/"
	}
	return u, nil
}

// RoundTrip implements http.RoundTripper.
func (t *rewriteTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	u := req.URL
	if u.Scheme != t.from.Scheme || u.Host != t.from.Host || !strings.HasPrefix(u.Path, t.from.Path) {
		return t.base.RoundTrip(req)
	}
	r := req.Clone(req.Context())
	nu := *u
	nu.Scheme = t.to.Scheme
	nu.Host = t.to.Host
	nu.Path = t.to.Path + strings.TrimPrefix(u.Path, t.from.Path)
	nu.RawPath = ""
	if u.RawPath != "" {
		nu.RawPath = t.to.EscapedPath() + strings.TrimPrefix(u.RawPath, t.from.EscapedPath())
	}
	r.URL = &nu
	r.Host = ""
	return t.base.RoundTrip(r)
}

// InvitePermissions is the permission integer the bot needs in the
// channels it serves (docs/discord.md explains each bit): View Channels,
// Send Messages, Attach Files, Read Message History, Create Public Threads
// and Send Messages in Threads = 309237746688. discordfake grants exactly
// these by default (a test keeps the two equal).
const InvitePermissions int64 = discordgo.PermissionViewChannel |
	discordgo.PermissionSendMessages |
	discordgo.PermissionAttachFiles |
	discordgo.PermissionReadMessageHistory |
	discordgo.PermissionCreatePublicThreads |
	discordgo.PermissionSendMessagesInThreads

// InviteURL is the OAuth2 URL that adds the bot (application appID) to a
// server with InvitePermissions.
func InviteURL(appID string) string {
	q := url.Values{}
	q.Set("client_id", appID)
	q.Set("scope", "bot")
	q.Set("permissions", strconv.FormatInt(InvitePermissions, 10))
	return "https://discord.com/oauth2/authorize?" + q.Encode()
}
