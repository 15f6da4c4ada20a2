// Package discordfake is an in-process fake of Discord for tests: the REST
// API (under /api/v9/) and the gateway websocket, speaking the real wire
// protocol so that the real discordgo client can be driven against it.
//
// What it serves:
//
//   - GET /api/v9/gateway and /api/v9/gateway/bot → the websocket URL;
//   - the gateway: HELLO (op 10), IDENTIFY (op 2) → READY, heartbeats
//     (op 1 → op 11), RESUME (op 6) → replay of missed events + RESUMED,
//     dispatches MESSAGE_CREATE, MESSAGE_UPDATE, THREAD_CREATE and
//     INTERACTION_CREATE;
//   - GET /channels/{id}, POST/PATCH /channels/{id}/messages[/{mid}],
//     POST /channels/{id}/messages/{mid}/threads, POST /channels/{id}/typing,
//     POST /interactions/{id}/{token}/callback, POST /webhooks/{app}/{token},
//     GET /users/@me, and attachment downloads.
//
// It validates what Discord validates (content ≤ 2,000 characters, 5×5
// components, custom_id 1–100 and unique, label ≤ 80, interaction answered
// within 3 s, thread names 1–100; Components V2 messages, flag 1<<15:
// no content or embeds, ≤ 40 components, ≤ 4,000 characters of text,
// the flag kept by edits — components.go) and answers like Discord does.
//
// Test code plays the users (SendMessage, Send, Click), inspects what the
// bot did (Messages, Edits, Threads, InteractionResponses, Followups,
// Typing, Requests) and injects faults (Reconnect, InvalidSession,
// DropSocket, CloseWith, RefuseGateway, FailGatewayLookup, ResetToken,
// Inject429, FailCreate, LoseResponses, SetOutage). A create-message request
// with a nonce and enforce_nonce is de-duplicated as Discord does
// (nonce.go). The bot holds a permission set (Options.Permissions,
// SetPermissions; default the invite's) and a request it does not allow
// answers 403 Missing Permissions, code 50013 (perms.go). Every method is safe for concurrent
// use. The fake is usable from any package: point a config's
// discord.api_url at URL() and its token at Token().
package discordfake

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"
)

// Defaults of Options.
const (
	DefaultToken             = "fake-discord-bot-token"
	DefaultBotID             = "900000000000000001"
	DefaultBotName           = "agentbridge"
	DefaultAppID             = "900000000000000002"
	DefaultHeartbeatInterval = 41250 * time.Millisecond
	DefaultRetryAfter        = 300 * time.Millisecond
)

// InteractionTimeout is how long Discord waits for the initial response to
// an interaction; later callbacks get 404 Unknown interaction.
const InteractionTimeout = 3 * time.Second

// discordEpoch is the first millisecond of 2015, the origin of snowflakes.
const discordEpoch = 1420070400000

// Options configure a Fake. Zero values take the defaults above.
type Options struct {
	Token             string        // the bot token REST and IDENTIFY must carry (without "Bot ")
	BotID             string        // the bot's user id
	BotName           string        // the bot's username
	AppID             string        // the application id (interactions, webhooks)
	HeartbeatInterval time.Duration // sent in HELLO
	RetryAfter        time.Duration // retry_after of injected 429s
	// DenyMessageContent makes IDENTIFY with the MESSAGE_CONTENT intent
	// fail with close 4014, as Discord does when the privileged intent is
	// not enabled for the application.
	DenyMessageContent bool
	// Permissions the bot holds in server channels (perms.go); 0 means
	// DefaultPermissions. A message with files without Attach Files, a
	// thread without Create Public Threads… answer 403, code 50013.
	Permissions int64
}

// Fake is a running fake Discord. Create it with New or NewWithOptions;
// it stops when the test ends (or on Close).
type Fake struct {
	t    testing.TB
	opts Options
	srv  *httptest.Server

	mu      sync.Mutex
	changed chan struct{} // closed and replaced on every change (see wait)
	lastID  uint64
	closed  bool
	perms   int64 // the bot's permissions in server channels (perms.go)

	users        map[string]*wireUser
	channels     map[string]*wireChannel
	messages     map[string]*message
	order        []string // message ids in creation order
	threads      []Thread
	edits        []Edit
	typing       []Typing
	interactions map[string]*interaction // by interaction id
	byToken      map[string]*interaction // by interaction token
	responses    []InteractionResponse
	followups    []Followup
	requests     []Request
	throttle     map[string]int // route → remaining injected 429s
	outage       map[string]int // route → HTTP status answered to every request (SetOutage)
	files        map[string]file

	sessions     map[string]*session
	conns        map[*conn]struct{}
	stats        GatewayStats
	resumeReplay int
	denyContent  bool
	refuse       int // gateway handshakes still to refuse with 502; < 0: all
	nonces       nonceState
	threadFail   threadFailure // FailThreadStart
	lookupDown   int           // GET /gateway calls still to answer 503; < 0: all
	holds        []*heldCall   // answers to hold (HoldResponse)
}

type message struct {
	wire    wireMessage
	created time.Time
	edited  time.Time
	allowed *[]string // allowed_mentions.parse of the create request
}

type interaction struct {
	wire      wireInteraction
	clickedAt time.Time
	acked     bool
}

type file struct {
	contentType string
	data        []byte
}

// Button is one button of a posted message.
type Button struct {
	CustomID string
	Label    string
	Style    int // 1 primary, 2 secondary, 3 success, 4 danger, 5 link
	Disabled bool
}

// Message is a message as the fake currently stores it (after edits).
type Message struct {
	ID          string
	ChannelID   string
	GuildID     string
	AuthorID    string
	AuthorIsBot bool
	Content     string
	// Text is what the message shows: Content, or on a Components V2
	// message (V2) its text displays joined with newlines.
	Text        string
	Flags       int
	V2          bool       // flag IS_COMPONENTS_V2: laid out by components alone
	Rows        [][]Button // action rows of buttons (a section's button: a row of one); nil when none
	Attachments []string   // file names
	// AllowedMentions is allowed_mentions.parse of the request that
	// created the message; nil when the request had no allowed_mentions
	// (Discord then pings everyone mentioned, @everyone included).
	AllowedMentions *[]string
	// ReplyTo is the id of the message this one replies to (type 19, a
	// message_reference to a message of its channel); "" for none.
	ReplyTo   string
	CreatedAt time.Time
	EditedAt  time.Time // zero when never edited
}

// Buttons returns all buttons of m, row by row.
func (m Message) Buttons() []Button {
	var out []Button
	for _, r := range m.Rows {
		out = append(out, r...)
	}
	return out
}

// Edit is one accepted PATCH of a message (or a type 7 interaction update).
type Edit struct {
	ChannelID     string
	MessageID     string
	Content       string
	ContentSet    bool // the request carried "content"
	Rows          [][]Button
	ComponentsSet bool // the request carried "components" (an empty list removes them)
	Flags         int  // the request's flags (0 when it carried none)
	V2            bool // the message is a Components V2 message after the edit
	At            time.Time
}

// Thread is a thread the bot started on a message.
type Thread struct {
	ID                  string // equals MessageID, as on Discord
	ParentID            string
	GuildID             string
	MessageID           string
	Name                string
	Type                int
	AutoArchiveDuration int
	At                  time.Time
}

// InteractionResponse is an initial interaction response (callback).
type InteractionResponse struct {
	InteractionID string
	Type          int // 4, 5, 6 (deferred update) or 7
	Content       string
	Flags         int
	ClickedAt     time.Time // when Click dispatched the interaction
	At            time.Time // when the callback arrived
	Late          bool      // arrived after InteractionTimeout and was refused
}

// Latency is the time between the click and the callback.
func (r InteractionResponse) Latency() time.Duration { return r.At.Sub(r.ClickedAt) }

// Followup is a message sent with an interaction's webhook token.
type Followup struct {
	InteractionID string
	ApplicationID string
	Content       string
	Flags         int // FlagEphemeral (64) for clicker-only messages
	At            time.Time
}

// Ephemeral reports whether the follow-up was visible to the clicker only.
func (f Followup) Ephemeral() bool { return f.Flags&FlagEphemeral != 0 }

// Typing is one POST /channels/{id}/typing.
type Typing struct {
	ChannelID string
	At        time.Time
}

// Request is one REST request the fake received.
type Request struct {
	Method string
	Path   string // as received, e.g. /api/v9/channels/1/messages
	Route  string // the matched route, e.g. RouteCreateMessage; "" when none
	Status int
	At     time.Time
}

// New starts a fake with default Options and stops it when t ends.
func New(t testing.TB) *Fake { return NewWithOptions(t, Options{}) }

// NewWithOptions starts a fake with o and stops it when t ends.
func NewWithOptions(t testing.TB, o Options) *Fake {
	t.Helper()
	if o.Token == "" {
		o.Token = DefaultToken
	}
	if o.BotID == "" {
		o.BotID = DefaultBotID
	}
	if o.BotName == "" {
		o.BotName = DefaultBotName
	}
	if o.AppID == "" {
		o.AppID = DefaultAppID
	}
	if o.HeartbeatInterval <= 0 {
		o.HeartbeatInterval = DefaultHeartbeatInterval
	}
	if o.RetryAfter <= 0 {
		o.RetryAfter = DefaultRetryAfter
	}
	if o.Permissions == 0 {
		o.Permissions = DefaultPermissions
	}
	f := &Fake{
		t:            t,
		opts:         o,
		perms:        o.Permissions,
		changed:      make(chan struct{}),
		users:        map[string]*wireUser{},
		channels:     map[string]*wireChannel{},
		messages:     map[string]*message{},
		interactions: map[string]*interaction{},
		byToken:      map[string]*interaction{},
		throttle:     map[string]int{},
		outage:       map[string]int{},
		files:        map[string]file{},
		sessions:     map[string]*session{},
		conns:        map[*conn]struct{}{},
		denyContent:  o.DenyMessageContent,
	}
	f.users[o.BotID] = &wireUser{ID: o.BotID, Username: o.BotName, Discriminator: "0", Bot: true}
	f.srv = httptest.NewServer(f.routes())
	t.Cleanup(f.Close)
	return f
}

// Close stops the server and drops every gateway connection. It is called
// automatically when the test ends; calling it twice is harmless.
func (f *Fake) Close() {
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return
	}
	f.closed = true
	conns := make([]*conn, 0, len(f.conns))
	for c := range f.conns {
		conns = append(conns, c)
	}
	f.mu.Unlock()
	for _, c := range conns {
		c.kill()
	}
	f.srv.CloseClientConnections()
	f.srv.Close()
}

// URL is the REST base to configure as discord.api_url, ending in "/api/v9/".
func (f *Fake) URL() string { return f.srv.URL + "/api/v9/" }

// GatewayURL is the websocket URL that GET /gateway returns.
func (f *Fake) GatewayURL() string { return "ws" + f.srv.URL[len("http"):] + "/gateway" }

// Token is the bot token the fake accepts (configure it without "Bot ").
func (f *Fake) Token() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.opts.Token
}

// BotID is the bot's user id.
func (f *Fake) BotID() string { return f.opts.BotID }

// AppID is the application id.
func (f *Fake) AppID() string { return f.opts.AppID }

// newID returns a fresh, increasing snowflake. Caller holds f.mu.
func (f *Fake) newID() string {
	ms := uint64(time.Now().UnixMilli() - discordEpoch)
	id := ms << 22
	if id <= f.lastID {
		id = f.lastID + 1
	}
	f.lastID = id
	return strconv.FormatUint(id, 10)
}

// notify wakes up waiters. Caller holds f.mu.
func (f *Fake) notify() {
	close(f.changed)
	f.changed = make(chan struct{})
}

// Wait polls cond (called without the fake's lock held, so it may call
// the fake's accessors) after every change until it returns true or the
// timeout passes.
func (f *Fake) Wait(timeout time.Duration, cond func() bool) error {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		f.mu.Lock()
		ch := f.changed
		f.mu.Unlock()
		if cond() {
			return nil
		}
		select {
		case <-ch:
		case <-deadline.C:
			if cond() {
				return nil
			}
			return fmt.Errorf("discordfake: condition not met within %v", timeout)
		}
	}
}

// user returns (creating on first use) the user with id. Caller holds f.mu.
func (f *Fake) user(id, name string) *wireUser {
	if u, ok := f.users[id]; ok {
		if name != "" && u.Username != name {
			u.Username = name
		}
		return u
	}
	if name == "" {
		name = "user" + id
	}
	u := &wireUser{ID: id, Username: name, Discriminator: "0"}
	f.users[id] = u
	return u
}

// channel returns (creating on first use) a channel: a guild text channel
// when guildID is set, else a DM with the user. Caller holds f.mu.
func (f *Fake) channel(id, guildID, userID string) *wireChannel {
	if ch, ok := f.channels[id]; ok {
		return ch
	}
	ch := &wireChannel{ID: id, GuildID: guildID, Type: ChannelGuildText, Name: "channel-" + id}
	if guildID == "" {
		ch.Type = ChannelDM
		ch.Name = ""
		if u, ok := f.users[userID]; ok {
			ch.Recipients = []wireUser{*u}
		}
	}
	f.channels[id] = ch
	return ch
}

// AddChannel registers a channel (for example a thread that a user, not
// the bot, created: Type ChannelPublicThread with ParentID). Channels used
// by SendMessage are created automatically.
func (f *Fake) AddChannel(id, guildID, parentID string, typ int, name string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.channels[id] = &wireChannel{ID: id, GuildID: guildID, ParentID: parentID, Type: typ, Name: name}
	f.notify()
}

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return hex.EncodeToString(b)
}

func (f *Fake) publicMessage(m *message) Message {
	out := Message{
		ID:          m.wire.ID,
		ChannelID:   m.wire.ChannelID,
		GuildID:     m.wire.GuildID,
		AuthorID:    m.wire.Author.ID,
		AuthorIsBot: m.wire.Author.Bot,
		Content:     m.wire.Content,
		Text:        m.wire.Content,
		Flags:       m.wire.Flags,
		V2:          m.wire.Flags&FlagComponentsV2 != 0,
		Rows:        buttonsOf(m.wire.Components),
		CreatedAt:   m.created,
		EditedAt:    m.edited,
	}
	if out.V2 {
		out.Text = textOf(m.wire.Components)
	}
	if r := m.wire.MessageReference; r != nil && m.wire.Type == 19 {
		out.ReplyTo = r.MessageID
	}
	if m.allowed != nil {
		a := append([]string{}, (*m.allowed)...)
		out.AllowedMentions = &a
	}
	for _, a := range m.wire.Attachments {
		out.Attachments = append(out.Attachments, a.Filename)
	}
	return out
}
