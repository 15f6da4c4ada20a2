package discordfake

import (
	"encoding/json"
	"time"
)

// This file holds the JSON shapes of the Discord API as the real service
// sends and accepts them (https://discord.com/developers/docs). They are
// written from the documentation, not borrowed from discordgo, so that the
// fake checks the client library instead of agreeing with it.

// Gateway opcodes.
const (
	opDispatch       = 0
	opHeartbeat      = 1
	opIdentify       = 2
	opPresenceUpdate = 3
	opResume         = 6
	opReconnect      = 7
	opInvalidSession = 9
	opHello          = 10
	opHeartbeatACK   = 11
)

// Gateway close codes (https://discord.com/developers/docs/topics/opcodes-and-status-codes).
const (
	CloseUnknownError         = 4000
	CloseAuthenticationFailed = 4004
	CloseInvalidSeq           = 4007
	CloseSessionTimedOut      = 4009
	CloseInvalidShard         = 4010
	CloseShardingRequired     = 4011
	CloseInvalidAPIVersion    = 4012
	CloseInvalidIntents       = 4013
	CloseDisallowedIntents    = 4014
)

// IntentMessageContent is the privileged MESSAGE_CONTENT gateway intent bit.
const IntentMessageContent = 1 << 15

// Channel types used by the fake.
const (
	ChannelGuildText    = 0
	ChannelDM           = 1
	ChannelPublicThread = 11
)

// messageTypeReply is the type of a message that replies to another.
const messageTypeReply = 19

// Interaction types and interaction callback types.
const (
	interactionMessageComponent = 3

	CallbackChannelMessage         = 4
	CallbackDeferredChannelMessage = 5
	CallbackDeferredUpdate         = 6
	CallbackUpdateMessage          = 7
)

// FlagEphemeral is the message flag of ephemeral (clicker-only) messages.
const FlagEphemeral = 1 << 6

// nonResumable reports whether a gateway close code ends the session for
// good (Discord documents these as "reconnect: false").
func nonResumable(code int) bool {
	switch code {
	case CloseAuthenticationFailed, CloseInvalidShard, CloseShardingRequired,
		CloseInvalidAPIVersion, CloseInvalidIntents, CloseDisallowedIntents:
		return true
	}
	return false
}

type gatewayPayload struct {
	Op int             `json:"op"`
	D  json.RawMessage `json:"d"`
	S  *int64          `json:"s"`
	T  *string         `json:"t"`
}

type identifyData struct {
	Token   string `json:"token"`
	Intents int64  `json:"intents"`
}

type resumeData struct {
	Token     string `json:"token"`
	SessionID string `json:"session_id"`
	Seq       int64  `json:"seq"`
}

type wireUser struct {
	ID            string  `json:"id"`
	Username      string  `json:"username"`
	Discriminator string  `json:"discriminator"`
	GlobalName    *string `json:"global_name"`
	Avatar        *string `json:"avatar"`
	Bot           bool    `json:"bot,omitempty"`
}

type wireMember struct {
	User        *wireUser `json:"user,omitempty"`
	Nick        *string   `json:"nick"`
	Roles       []string  `json:"roles"`
	JoinedAt    string    `json:"joined_at"`
	Deaf        bool      `json:"deaf"`
	Mute        bool      `json:"mute"`
	Permissions string    `json:"permissions,omitempty"`
}

type wireAttachment struct {
	ID          string `json:"id"`
	Filename    string `json:"filename"`
	ContentType string `json:"content_type,omitempty"`
	Size        int    `json:"size"`
	URL         string `json:"url"`
	ProxyURL    string `json:"proxy_url"`
	// A voice message's audio has its length and a base64 waveform.
	DurationSecs float64 `json:"duration_secs,omitempty"`
	Waveform     string  `json:"waveform,omitempty"`
}

// wireComponent is an action row (type 1) or a button (type 2).
type wireComponent struct {
	Type       int             `json:"type"`
	Style      int             `json:"style,omitempty"`
	Label      string          `json:"label,omitempty"`
	CustomID   string          `json:"custom_id,omitempty"`
	URL        string          `json:"url,omitempty"`
	Disabled   bool            `json:"disabled,omitempty"`
	Components []wireComponent `json:"components,omitempty"`
	Content    string          `json:"content,omitempty"`   // text display (10)
	Accessory  *wireComponent  `json:"accessory,omitempty"` // section (9)
}

type wireMessage struct {
	ID              string            `json:"id"`
	ChannelID       string            `json:"channel_id"`
	GuildID         string            `json:"guild_id,omitempty"`
	Author          wireUser          `json:"author"`
	Member          *wireMember       `json:"member,omitempty"`
	Content         string            `json:"content"`
	Timestamp       string            `json:"timestamp"`
	EditedTimestamp *string           `json:"edited_timestamp"`
	TTS             bool              `json:"tts"`
	MentionEveryone bool              `json:"mention_everyone"`
	Mentions        []wireUser        `json:"mentions"`
	MentionRoles    []string          `json:"mention_roles"`
	Attachments     []wireAttachment  `json:"attachments"`
	Embeds          []json.RawMessage `json:"embeds"`
	Components      []wireComponent   `json:"components"`
	Pinned          bool              `json:"pinned"`
	Type            int               `json:"type"`
	Flags           int               `json:"flags"`
	WebhookID       string            `json:"webhook_id,omitempty"`
	ApplicationID   string            `json:"application_id,omitempty"`
	Nonce           json.RawMessage   `json:"nonce,omitempty"`
	// A reply (type 19) carries message_reference and referenced_message
	// (null when the replied-to message was deleted), as on Discord.
	MessageReference  *wireMessageRef `json:"message_reference,omitempty"`
	ReferencedMessage *wireMessage    `json:"referenced_message,omitempty"`
}

// wireMessageRef is a message reference (type 0: a reply).
type wireMessageRef struct {
	Type      int    `json:"type"`
	MessageID string `json:"message_id"`
	ChannelID string `json:"channel_id"`
	GuildID   string `json:"guild_id,omitempty"`
}

type wireThreadMetadata struct {
	Archived            bool   `json:"archived"`
	AutoArchiveDuration int    `json:"auto_archive_duration"`
	ArchiveTimestamp    string `json:"archive_timestamp"`
	Locked              bool   `json:"locked"`
}

type wireChannel struct {
	ID             string              `json:"id"`
	Type           int                 `json:"type"`
	GuildID        string              `json:"guild_id,omitempty"`
	ParentID       string              `json:"parent_id,omitempty"`
	Name           string              `json:"name,omitempty"`
	OwnerID        string              `json:"owner_id,omitempty"`
	ThreadMetadata *wireThreadMetadata `json:"thread_metadata,omitempty"`
	Recipients     []wireUser          `json:"recipients,omitempty"`
	NewlyCreated   bool                `json:"newly_created,omitempty"`
	MessageCount   int                 `json:"message_count,omitempty"`
	MemberCount    int                 `json:"member_count,omitempty"`
}

type wireInteraction struct {
	ID             string       `json:"id"`
	ApplicationID  string       `json:"application_id"`
	Type           int          `json:"type"`
	Data           wireCompData `json:"data"`
	GuildID        string       `json:"guild_id,omitempty"`
	ChannelID      string       `json:"channel_id"`
	Member         *wireMember  `json:"member,omitempty"`
	User           *wireUser    `json:"user,omitempty"`
	Token          string       `json:"token"`
	Version        int          `json:"version"`
	Message        *wireMessage `json:"message"`
	AppPermissions string       `json:"app_permissions"`
	Locale         string       `json:"locale"`
}

type wireCompData struct {
	CustomID      string `json:"custom_id"`
	ComponentType int    `json:"component_type"`
}

// wireMessageBody is what a client sends to create or edit a message (and
// the data of interaction callbacks and webhook executions). Pointer
// fields tell "absent" from "empty".
type wireMessageBody struct {
	Content      *string            `json:"content"`
	Components   *[]wireComponent   `json:"components"`
	Embeds       *[]json.RawMessage `json:"embeds"`
	Flags        *int               `json:"flags"`         // nil: absent
	Nonce        json.RawMessage    `json:"nonce"`         // a string or an integer
	EnforceNonce bool               `json:"enforce_nonce"` // de-duplicate by nonce (nonce.go)
	// MessageReference makes the new message a reply (type 19).
	MessageReference *wireMessageRef `json:"message_reference"`
	AllowedMentions  *struct {
		Parse []string `json:"parse"`
	} `json:"allowed_mentions"`
}

type wireCallback struct {
	Type int              `json:"type"`
	Data *wireMessageBody `json:"data"`
}

type wireThreadStart struct {
	Name                string `json:"name"`
	AutoArchiveDuration int    `json:"auto_archive_duration"`
	Type                int    `json:"type"`
}

// apiError is Discord's JSON error body.
type apiError struct {
	Code    int            `json:"code"`
	Message string         `json:"message"`
	Errors  map[string]any `json:"errors,omitempty"`
}

func isoTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000000+00:00") }
