// Package slack is the Slack adapter: Socket Mode for events, the Web API
// for posting, Block Kit buttons for cards.
//
// Conversations. A top-level channel message that mentions the bot starts
// a conversation keyed by that message: Key{Bot, Channel, Thread: its ts},
// and every answer goes into its thread. Inside a thread the core owns
// (Handler.Owns), every user message reaches the agent without a mention;
// a mention inside any other thread makes that thread a conversation. In a
// direct message (channel type im) no mention is needed: top-level DMs all
// share one conversation, Key{Bot, Channel: the DM, Thread: ""}, answered
// at top level; a message inside a DM thread (e.g. an assistant thread)
// belongs to Key{Bot, DM, thread_ts}. Group DMs (mpim) behave like
// channels. Messages from bots (the bot's own included), edits, deletions
// and other subtypes are ignored; "file_share" and "thread_broadcast"
// messages count as user messages.
//
// Quoted context. A mention in a thread the core does not own carries the
// thread's parent message (conversations.replies, cached per thread) as
// Inbound.ReplyTo and Inbound.Quoted ("AUTHOR wrote:" and its text), its
// files as Files named "quoted-NAME"; a message sharing another
// (attachments with is_share or is_msg_unfurl) carries the shared text
// and files the same way. Strangers' messages carry none and cause no
// look-up.
//
// Strangers. A message from a user the bot's access rules refuse
// (Handler.Allowed) causes nothing visible: no thread is started for a
// top-level mention (it reaches the core keyed by the channel), no name
// lookup, no working indicator; the core answers it with at most one
// ephemeral notice an hour (PostEphemeral), never a public message.
//
// Delivery. Envelopes are handled one at a time in arrival order. A
// message envelope is acknowledged only after Handler.HandleMessage
// returned nil (it was durably accepted); on an error it is not
// acknowledged and Slack sends it again. Each message (channel + ts) is
// handed to the core once: Slack's retries and the app_mention event that
// duplicates a channel message are acknowledged without a second call.
// Interactive envelopes are acknowledged at once, then Handler.HandleAction
// runs.
//
// Text. Outgoing CommonMark becomes mrkdwn (ToMrkdwn); a Post whose
// converted text is over 4,000 characters is split again into several
// messages. Incoming text is unescaped, the bot mention removed, and
// <url|label> links, <@U…> mentions and <#C…> channels turned into plain
// text.
//
// # Files
//
// Every adapter has the same files for the same roles (bridges/adapters/discord,
// bridges/adapters/web), keeps its bounded memories in bridges/internal/lru, and
// tests each file in the _test.go file of the same name (helpers_test.go
// holds the test kit, bench_test.go the benchmarks, manifest_test.go
// checks manifest.yaml).
//
// files:
//
//   - bridge.go: Bridge, New and Open, Limits, the abilities offered, the
//     bot's identity.
//   - run.go: Run: auth.test, the Socket Mode sessions and their
//     reconnects, and each envelope's handling and acknowledgement.
//   - inbound.go: message and app_mention events to bridges.Inbound:
//     routing, de-duplication, strangers, user names, quoted context.
//   - outbound.go: Post, Edit, PostEphemeral, StartThread, cards (Block
//     Kit) and the 429 retry of every Web API call.
//   - format.go: CommonMark to mrkdwn (ToMrkdwn) and Slack's event text
//     to plain text.
//   - split.go: splitting and cutting mrkdwn to Slack's limits.
//   - typing.go: SetTyping: the thread status, or a reaction.
//   - files.go: FetchFile (files in) and UploadFile (files out).
//   - errors.go: sentinel errors, which Web API errors are permanent, the
//     token failures that stop Run with what to do, and the redaction of
//     tokens from logged errors.
//
// Files only Slack needs:
//
//   - config.go: bots[].slack settings and schedule targets.
//   - interactions.go: Block Kit button clicks (block_actions).
//   - idem.go: the reply key in message metadata that makes a retried
//     Post show once (Slack has no idempotency key).
//   - stream.go: the Streamer ability (chat.startStream), which only
//     Slack has.
package slack

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	slackapi "github.com/slack-go/slack"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/internal/lru"
	"github.com/agentbridge/agentbridge/config"
)

var (
	_ bridges.Platform    = (*Bridge)(nil)
	_ bridges.Editor      = (*Bridge)(nil)
	_ bridges.Typer       = (*Bridge)(nil)
	_ bridges.FileFetcher = (*Bridge)(nil)
	_ bridges.Ephemeral   = (*Bridge)(nil)
)

// Slack limits the adapter works within.
const (
	// maxMessageRunes is what the core may send per message (CommonMark);
	// it leaves room for conversion before Slack's advised 4,000.
	maxMessageRunes = 3500
	// maxTextRunes is the most the adapter puts in one message's text.
	maxTextRunes = 4000
	// maxEditRunes caps an edited text (chat.update edits one message and
	// cannot split; Slack truncates at 40,000).
	maxEditRunes = 39000
	// maxSectionRunes is the text limit of a section block.
	maxSectionRunes = 3000
	// maxCardRunes caps a card's section text in total (Slack answers
	// msg_blocks_too_long somewhere above ~13,000).
	maxCardRunes = 12000
	// maxButtonsPerBlock is the element limit of an actions block.
	maxButtonsPerBlock = 25
	// maxButtonRunes is the button text limit.
	maxButtonRunes = 75
)

// Bridge is one Slack bot. Create it with New; Run it once. Post, Edit,
// SetTyping, React and FetchFile may be called from any goroutine, also
// before or after Run.
type Bridge struct {
	name       string
	api        *slackapi.Client
	httpClient *http.Client
	log        *slog.Logger
	redact     redactor

	// handlerTimeout bounds one Handler call so that envelopes are acked
	// (or left for Slack's retry) within Slack's 3 s.
	handlerTimeout time.Duration
	// reconnect is the back-off between failed connection attempts
	// (auth.test, apps.connections.open, the websocket); Run never gives
	// up on a transient failure.
	reconnect bridges.Backoff

	selfMu sync.RWMutex
	self   identity

	seen    *lru.Cache[string, struct{}] // messages handed to the core (channel/ts)
	users   *userCache                   // user id → display name
	latest  *lru.Cache[string, string]   // conversation key → ts of its latest inbound message
	parents *lru.Cache[string, quote]    // channel/thread_ts → its parent message, quoted
	typing  typingState                  // thread status availability and hourglass reactions
	streams streamState                  // where chat.startStream was refused
	editGen editGens                     // newest pending Edit per message
}

// identity is the bot's own ids, learnt from auth.test.
type identity struct {
	userID string // U… (mentions look like <@U…>)
	botID  string // B… (bot_id of its own messages)
	teamID string // T… (recipient_team_id of streams)
}

// New creates the adapter for a configured Slack bot. It checks the
// configuration only; it does not contact Slack (Run does). A nil logger
// discards logs.
func New(bot *config.Bot, logger *slog.Logger) (*Bridge, error) {
	if bot == nil {
		return nil, ErrNoConfig
	}
	sc, ok := bot.Settings.(*Config)
	if !ok || sc == nil {
		return nil, ErrNoConfig
	}
	if sc.BotToken == "" || sc.AppToken == "" {
		return nil, fmt.Errorf("slack bot %q: bot_token and app_token are required: %w", bot.Name, ErrNoConfig)
	}
	apiURL := sc.APIURL
	if apiURL == "" {
		apiURL = DefaultAPIURL
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	// The core's write guard is asked as each request leaves (bridges.GuardWrites).
	httpClient := &http.Client{Transport: bridges.GuardWrites(transport), Timeout: 30 * time.Second}
	b := &Bridge{
		name:       bot.Name,
		httpClient: httpClient,
		log:        logger.With(slog.String("bot", bot.Name), slog.String("platform", Name)),
		redact:     newRedactor(sc.BotToken, sc.AppToken),
		api: slackapi.New(sc.BotToken,
			slackapi.OptionAppLevelToken(sc.AppToken),
			slackapi.OptionAPIURL(apiURL),
			slackapi.OptionHTTPClient(httpClient),
		),
		handlerTimeout: 2500 * time.Millisecond,
		seen:           lru.New[string, struct{}](20000),
		users:          newUserCache(5000, time.Hour),
		latest:         lru.New[string, string](10000),
		parents:        lru.New[string, quote](1000),
		typing:         newTypingState(),
		streams:        newStreamState(),
		editGen:        editGens{gen: map[string]uint64{}},
	}
	return b, nil
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

// Limits implements bridges.Platform.
func (b *Bridge) Limits() bridges.Limits {
	return bridges.Limits{
		Title:           "Slack",
		MaxMessageRunes: maxMessageRunes,
		CanButtons:      true,
		EditInterval:    time.Second,
		MaxButtons:      maxButtonsPerBlock,
		MaxUploadBytes:  maxUploadBytes,
		ReportsState:    true,
	}
}

func (b *Bridge) identity() identity {
	b.selfMu.RLock()
	defer b.selfMu.RUnlock()
	return b.self
}

func (b *Bridge) setIdentity(id identity) {
	b.selfMu.Lock()
	defer b.selfMu.Unlock()
	b.self = id
}
