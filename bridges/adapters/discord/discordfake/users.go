package discordfake

import (
	"encoding/json"
	"strings"
	"time"
)

// UserMessage is a message a (fake) user sends, for Send.
type UserMessage struct {
	ChannelID   string // created on first use: a guild text channel if GuildID is set, else a DM
	GuildID     string // "" for a DM (ignored for existing channels, which keep theirs)
	UserID      string
	UserName    string // default "user<UserID>"
	Content     string
	MentionsBot bool // prefix "<@bot> " (unless present) and list the bot in mentions
	AuthorIsBot bool // the author is another bot
	Attachments []Attachment
	// ReplyTo is the id of a message of the same channel this one replies
	// to: the message is of type 19 (Reply) with message_reference and
	// referenced_message, which is null when no such message exists (as
	// for a deleted one).
	ReplyTo string
	// Voice sends a voice message, as Discord's apps record them: flag
	// IS_VOICE_MESSAGE (1<<13), no content, one audio attachment (the
	// first of Attachments) with duration_secs and a waveform.
	Voice bool
}

// messageFlagVoice is IS_VOICE_MESSAGE.
const messageFlagVoice = 1 << 13

// Attachment is a file attached to a UserMessage; the fake serves it at
// the attachment URL in the message.
type Attachment struct {
	Filename    string
	ContentType string
	Data        []byte
}

// SendMessage posts a user's message and dispatches MESSAGE_CREATE. It
// returns the new message id. guildID "" means a DM channel.
func (f *Fake) SendMessage(channelID, guildID, userID, content string, mentionsBot bool) string {
	return f.Send(UserMessage{ChannelID: channelID, GuildID: guildID, UserID: userID, Content: content, MentionsBot: mentionsBot})
}

// Send posts m and dispatches MESSAGE_CREATE; it returns the message id.
func (f *Fake) Send(m UserMessage) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	author := f.user(m.UserID, m.UserName)
	author.Bot = m.AuthorIsBot
	ch := f.channel(m.ChannelID, m.GuildID, m.UserID)
	now := time.Now()
	w := wireMessage{
		ID:           f.newID(),
		ChannelID:    ch.ID,
		GuildID:      ch.GuildID,
		Author:       *author,
		Content:      m.Content,
		Timestamp:    isoTime(now),
		Mentions:     []wireUser{},
		MentionRoles: []string{},
		Attachments:  []wireAttachment{},
		Embeds:       []json.RawMessage{},
		Components:   []wireComponent{},
	}
	if m.MentionsBot {
		tag := "<@" + f.opts.BotID + ">"
		if !strings.Contains(w.Content, tag) && !strings.Contains(w.Content, "<@!"+f.opts.BotID+">") {
			w.Content = tag + " " + w.Content
		}
		w.Mentions = append(w.Mentions, *f.users[f.opts.BotID])
	}
	for _, a := range m.Attachments {
		id := f.newID()
		f.files[id] = file{contentType: a.ContentType, data: a.Data}
		url := f.srv.URL + "/attachments/" + ch.ID + "/" + id + "/" + a.Filename
		wa := wireAttachment{
			ID: id, Filename: a.Filename, ContentType: a.ContentType, Size: len(a.Data), URL: url, ProxyURL: url,
		}
		if m.Voice {
			wa.DurationSecs, wa.Waveform = 2.5, "AAAAAAAA"
		}
		w.Attachments = append(w.Attachments, wa)
	}
	if m.Voice {
		w.Flags |= messageFlagVoice
		w.Content = ""
	}
	if ch.GuildID != "" {
		w.Member = member(nil, now)
	}
	if m.ReplyTo != "" {
		w.Type = messageTypeReply
		w.MessageReference = &wireMessageRef{MessageID: m.ReplyTo, ChannelID: ch.ID, GuildID: ch.GuildID}
		if q, ok := f.messages[m.ReplyTo]; ok && q.wire.ChannelID == ch.ID {
			ref := q.wire
			ref.ReferencedMessage = nil // Discord does not nest them
			w.ReferencedMessage = &ref
		}
	}
	f.storeMessage(&message{wire: w, created: now})
	return w.ID
}

// storeMessage records a new message and dispatches MESSAGE_CREATE.
// Caller holds f.mu.
func (f *Fake) storeMessage(m *message) {
	f.messages[m.wire.ID] = m
	f.order = append(f.order, m.wire.ID)
	if ch, ok := f.channels[m.wire.ChannelID]; ok && ch.Type == ChannelPublicThread {
		ch.MessageCount++
	}
	f.dispatch("MESSAGE_CREATE", m.wire)
	f.notify()
}

func member(u *wireUser, joined time.Time) *wireMember {
	return &wireMember{User: u, Roles: []string{}, JoinedAt: isoTime(joined.Add(-time.Hour)), Permissions: "0"}
}

// Click presses the button customID of message messageID in channelID as
// userID and dispatches INTERACTION_CREATE. It returns the interaction id
// (the test fails, and "" is returned, when no such button exists).
// InteractionResponses records when the bot answered.
func (f *Fake) Click(channelID, messageID, userID, customID string) string {
	f.t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	m, ok := f.messages[messageID]
	if !ok || m.wire.ChannelID != channelID {
		f.t.Errorf("discordfake: Click: no message %s in channel %s", messageID, channelID)
		return ""
	}
	found := false
	for _, r := range buttonsOf(m.wire.Components) {
		for _, b := range r {
			if b.CustomID == customID && !b.Disabled {
				found = true
			}
		}
	}
	if !found {
		f.t.Errorf("discordfake: Click: message %s has no enabled button %q", messageID, customID)
		return ""
	}
	u := f.user(userID, "")
	now := time.Now()
	msg := m.wire
	in := wireInteraction{
		ID:             f.newID(),
		ApplicationID:  f.opts.AppID,
		Type:           interactionMessageComponent,
		Data:           wireCompData{CustomID: customID, ComponentType: 2},
		GuildID:        m.wire.GuildID,
		ChannelID:      channelID,
		Token:          "itoken-" + randomHex(16),
		Version:        1,
		Message:        &msg,
		AppPermissions: "0",
		Locale:         "en-US",
	}
	if in.GuildID != "" {
		in.Member = member(u, now)
	} else {
		uc := *u
		in.User = &uc
	}
	it := &interaction{wire: in, clickedAt: now}
	f.interactions[in.ID] = it
	f.byToken[in.Token] = it
	f.dispatch("INTERACTION_CREATE", in)
	f.notify()
	return in.ID
}
