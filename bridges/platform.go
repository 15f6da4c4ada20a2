// Package bridges holds the platform contract: what a chat adapter
// implements (Platform and its optional abilities) and what it may call
// (Handler, StateReporter, ConnReporter), with the message, card and state
// types both sides share. It imports nothing of the project; the
// conversation core is bridges/core.
//
// The core never names a platform: differences are expressed by Limits and
// by the optional ability interfaces (Editor, Typer, FileFetcher,
// Ephemeral, FileUploader, ThreadStarter). Rule of thumb: what the core may call is an interface,
// numbers and policy are Limits.
package bridges

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"
)

// ConversationKey identifies one conversation: a Slack thread, a Discord
// thread (or DM channel), a WhatsApp chat. Thread is "" when the channel
// itself is the conversation (DMs, WhatsApp).
type ConversationKey struct {
	Bot     string // configured bot name
	Channel string // platform channel / chat id
	Thread  string // platform thread id (Slack thread_ts, Discord thread channel id) or ""
}

// LogValue implements slog.LogValuer.
func (k ConversationKey) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("bot", k.Bot),
		slog.String("channel", k.Channel),
		slog.String("thread", k.Thread),
	)
}

// String renders the key as bot/channel/thread.
func (k ConversationKey) String() string { return k.Bot + "/" + k.Channel + "/" + k.Thread }

// File is an attachment of an inbound message. The adapter fills what it
// knows; the core downloads it through the platform's FileFetcher.
type File struct {
	ID       string
	Name     string
	MimeType string
	Size     int64
	URL      string
	// Voice marks a voice note recorded in the app (WhatsApp push-to-talk,
	// a Slack clip, a Discord voice message). The core transcribes it, and
	// any other audio/* file, when transcription is configured.
	Voice bool `json:",omitempty"`
}

// Inbound is a message addressed to the bot. The adapter has already decided
// that the bot should see it (mention, owned thread, DM) and has stripped the
// bot mention from Text. Text is plain CommonMark-ish text, unescaped.
type Inbound struct {
	Key      ConversationKey
	MsgID    string // platform message id, unique per bot (dedupe key)
	UserID   string
	UserName string
	Text     string
	Files    []File
	At       time.Time
	// ReplyTo is the platform message id this message quotes or replies
	// to ("" = none). On a platform without buttons a choice ("1", "no")
	// quoting a card answers that card only, looked up by the id the
	// card's Post returned; quoting a closed card decides nothing.
	ReplyTo string
	// Quoted is the text of the message this one quotes ("" = none or
	// unknown): the core gives it to the agent marked as quoted, before
	// Text, never as the author's own words (no command, no card answer).
	// A quoted image or document comes as one of Files.
	Quoted string
}

// Action is a click on a button of a card (or an equivalent reaction/reply).
// Reply sends a private answer to the clicker (ephemeral where the platform
// has it); it may be nil when the platform cannot answer privately.
type Action struct {
	Key      ConversationKey
	CardID   string // Message.CardID of the card
	Choice   string // Button.ID that was pressed
	UserID   string
	UserName string
	Reply    func(ctx context.Context, text string) error
}

// ButtonStyle hints how to draw a button.
type ButtonStyle int

// Button styles.
const (
	StyleDefault ButtonStyle = iota
	StylePrimary
	StyleDanger
)

// Button is one choice on a card. ID is short (≤ 32 bytes) so that
// CardID + ID fits platform limits (Discord custom_id ≤ 100).
type Button struct {
	ID    string
	Label string
	Style ButtonStyle
}

// Message is what the core asks an adapter to show. Text is CommonMark; the
// adapter converts it to the platform's markup. The core has already split it
// to fit Limits.MaxMessageRunes (conversion may add a little: adapters keep
// a margin or split again). A message with Buttons is a card: clicks come
// back as Actions carrying CardID.
//
// ReplyTo names a message of the same conversation that this one quotes:
// the Inbound.MsgID of the user's message that the first part of an answer
// (or the turn's first live message) replies to, or the MessageRef.ID of a
// card that a status posted instead of an edit is about. It is "" for no
// quote; adapters that cannot quote ignore it.
//
// Idem is set on replies posted from the outbox: a key unique to that one
// message (derived from its outbox row), the same on every attempt to post
// it. Retry says that an earlier attempt with the same Idem may have reached
// the platform (its response was lost). An adapter uses them to keep a
// repeated Post from showing the message twice: the platform's idempotency
// where it has one (a nonce, a message id chosen by the bridge), otherwise a
// look-up before posting again when Retry is set. When an adapter splits the
// text again, each part needs its own key derived from Idem.
//
// Live marks the first post of a turn's live message (the message edited
// as the turn grows, on a platform that closes cut ones: StreamCloser
// without Streamer); its Idem is then the turn's key, the same for every
// holder that runs the turn. A platform with a create-message nonce sends
// it, and when the platform answers with a message created earlier under
// that key (the turn cut off by its holder's death, run again) the adapter
// takes that message over if it is still open — it edits it to Text and
// returns it — and creates another (under a key derived from Idem) if it
// was closed or finished: one message per answer, the cut one closed.
type Message struct {
	Text    string
	CardID  string
	Buttons []Button
	ReplyTo string
	Idem    string
	Retry   bool
	Live    bool
}

// MessageRef identifies a posted message so it can be edited.
type MessageRef struct {
	Key ConversationKey
	ID  string // platform message id (Slack ts, Discord message id)
	// At is when the message was posted, by the core's clock: the core
	// sets it after Post (adapters leave it zero) and compares it with
	// Limits.EditMaxAge. Zero means unknown (too old when there is a limit).
	At time.Time `json:",omitzero"`
}

// Limits describe what a platform can do; the core adapts to them.
type Limits struct {
	// Title is how people call the platform in messages ("Slack", "the
	// web console"); "" = the bot's configured platform name.
	Title           string
	MaxMessageRunes int  // split longer text
	CanButtons      bool // cards have clickable buttons
	// EditMaxAge is how long after posting a message can still be edited
	// (Editor); 0 = no limit. Past it the core posts a new message instead.
	EditMaxAge   time.Duration
	EditInterval time.Duration // min time between edits/posts in one channel
	MaxButtons   int           // buttons per card
	// MaxUploadBytes is the largest file a FileUploader takes; 0 = the
	// core's own cap (DefaultMaxSendFileBytes) applies alone.
	MaxUploadBytes int64
	// ProgressInterval: on a platform that does not stream a turn into a
	// live message (no Editor, or WholeAnswers), a turn running longer than
	// this gets a short progress line, at most one per interval; 0 = none.
	// On an Editor the turn's progress line is one message, edited while
	// EditMaxAge allows and posted anew only beyond it.
	ProgressInterval time.Duration
	// WholeAnswers: turns are not streamed into a live message even though
	// the platform is an Editor; answers are posted whole (a new message
	// notifies people, an edit does not). The Editor then updates progress
	// lines and cards only (WhatsApp).
	WholeAnswers bool
	// ReportsState: Run reports the connection state through
	// ReportState (starting, connected, reconnecting, failed); otherwise
	// the core shows the bot as running while Run runs.
	ReportsState bool
	// FreeTyping: the working indicator (Typer) costs no platform call
	// (the web console), so it is shown as soon as a turn starts instead
	// of after config status_delay.
	FreeTyping bool
}

// Handler is implemented by the core and called by adapters. Both methods
// must return quickly (they never wait for the agent).
type Handler interface {
	// HandleMessage records m durably; nil means accepted (or a duplicate
	// already accepted) and the adapter may acknowledge the platform. A
	// message refused by access control also returns nil (nothing to
	// retry): the core counts it and tells the stranger privately where
	// the platform can (Ephemeral, at most once an hour per person), and
	// posts nothing in the conversation.
	HandleMessage(ctx context.Context, m Inbound) error
	// HandleAction routes a click to the conversation that owns the card.
	HandleAction(ctx context.Context, a Action) error
	// Owns reports whether the conversation exists (the bot owns that
	// thread), so that adapters can route un-mentioned thread messages.
	Owns(ctx context.Context, key ConversationKey) (bool, error)
	// Allowed reports whether user may talk to the bot key.Bot in
	// key.Channel (for a thread: its parent channel; key.Thread is not
	// looked at). It is cheap (no I/O). Adapters ask it before any side
	// effect of an inbound message that a stranger must not cause:
	// starting a thread, status, reaction, typing, lookups, downloads.
	// When it is false the adapter does none of them and still hands the
	// message to HandleMessage, keyed by where it already is (the channel,
	// or the existing thread; never a thread made for it) and without
	// files, so that the core counts the refusal and answers it its way.
	Allowed(key ConversationKey, user string) bool
}

// Platform is one configured bot's adapter.
type Platform interface {
	Limits() Limits
	// Run connects, reconnects and delivers events to h until ctx ends. It
	// never gives up on a transient error (network, DNS, 5xx, a refused
	// connection), at start-up included: it retries forever, waiting a
	// Backoff between attempts and reporting ConnReconnecting. It
	// returns nil on ctx cancellation and an error only on a permanent
	// problem (bad credentials, missing privileged intent, logged out),
	// preferably a *Failure that says what to do; that stops this bot
	// only and is not restarted. h also implements StateReporter (see
	// ReportState).
	Run(ctx context.Context, h Handler) error
	// Post sends a message into the conversation (into its thread).
	Post(ctx context.Context, key ConversationKey, m Message) (MessageRef, error)
}

// Editor is an optional ability: replace a posted message's text and
// buttons (no buttons = buttons removed). The core streams a turn into one
// message only on an Editor, and edits only messages younger than
// Limits.EditMaxAge; otherwise it posts a new message (a card's status
// quotes the card through Message.ReplyTo).
type Editor interface {
	Edit(ctx context.Context, ref MessageRef, m Message) error
}

// Typer is an optional ability: show that the agent is working. The core
// turns it on only for a turn that has run for config status_delay, and
// off when the turn ends, after the turn's reply was posted: an adapter
// whose post already cleared the indicator (Slack's thread status) makes
// no call for off. SetTyping(on=false) clears the indicator where the
// platform allows.
type Typer interface {
	SetTyping(ctx context.Context, key ConversationKey, on bool) error
}

// FileFetcher is an optional ability: download an inbound attachment,
// reading at most max bytes (ErrTooLarge beyond).
type FileFetcher interface {
	FetchFile(ctx context.Context, f File, max int64) ([]byte, error)
}

// ToolCall is one tool call of the agent as a ToolViewer shows it.
type ToolCall struct {
	ID      string // the CLI's tool_use id
	Name    string // "" in the call that reports the result
	Input   string // the input as JSON, as the agent gave it ("" with the result)
	Output  string // the result flattened to text; "" until Done
	IsError bool
	Done    bool // the result has arrived
}

// ToolLinkScheme prefixes the link target of a tool line written for a
// ToolViewer: "› [`Bash: ls`](tool:ID)" names the call ID it shows.
const ToolLinkScheme = "tool:"

// ToolViewer is an optional ability: the platform shows a tool call's full
// input and output on demand (the web console's expandable tool lines).
// For such a platform the core writes each tool line as a link to
// ToolLinkScheme+ID and calls ShowTool when the call is made and again
// when its result arrives (Done). It is called from the conversation's
// worker: it must return quickly; errors are logged, nothing is retried.
type ToolViewer interface {
	ShowTool(ctx context.Context, key ConversationKey, call ToolCall) error
}

// Ephemeral is an optional ability: show text to one user only, in the
// conversation at key (key.Thread "" = the channel itself). Nobody else
// sees it and it starts no thread. Platforms that cannot do this outside
// an interaction (Discord, WhatsApp) do not implement it, and the core
// stays silent there.
type Ephemeral interface {
	PostEphemeral(ctx context.Context, key ConversationKey, user, text string) error
}

// Upload is a file the agent sends into a conversation.
type Upload struct {
	Name    string // file name shown, without directories
	Data    []byte // at most Limits.MaxUploadBytes
	Comment string // CommonMark shown with the file; may be ""
}

// FileUploader is an optional ability: post a file as an attachment in the
// conversation at key (into its thread), with Comment as its message. The
// returned ref may have an empty ID where the platform does not say which
// message carries the file. Platforms without it get the file as a text
// snippet, when it is text.
type FileUploader interface {
	UploadFile(ctx context.Context, key ConversationKey, f Upload) (MessageRef, error)
}

// ThreadStarter is an optional ability: post m at the top level of the
// channel at in (in.Thread is "") and start a thread on it, returning the
// key of the new conversation (the thread) and the posted message. A
// scheduled run with new_thread uses it; without it the run goes to the
// channel itself. When the message is posted but no thread can be made, it
// returns in and a nil error.
type ThreadStarter interface {
	StartThread(ctx context.Context, in ConversationKey, m Message) (ConversationKey, MessageRef, error)
}

// EncodeFiles is how the ledger stores a message's files: JSON (nil when
// none).
func EncodeFiles(files []File) ([]byte, error) {
	if len(files) == 0 {
		return nil, nil
	}
	b, err := json.Marshal(files)
	if err != nil {
		return nil, fmt.Errorf("encode attachments: %w", err)
	}
	return b, nil
}

// DecodeFiles reads a message's files back from the ledger.
func DecodeFiles(b []byte) []File {
	if len(b) == 0 {
		return nil
	}
	var files []File
	if err := json.Unmarshal(b, &files); err != nil {
		return nil
	}
	return files
}
