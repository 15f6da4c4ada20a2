package discord

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/bwmarrin/discordgo"
)

const (
	// maxThreadName is Discord's limit for thread names.
	maxThreadName = 100
	// threadArchiveMinutes: threads auto-archive after a week without
	// activity (a new message unarchives them).
	threadArchiveMinutes = 10080
	// codeThreadAlreadyCreated is Discord's JSON error code when a message
	// already has a thread (its id is the message id).
	codeThreadAlreadyCreated = 160004
	// codeMissingPermissions is Discord's JSON error code (with HTTP 403)
	// for a bot that lacks a permission, such as Create Public Threads.
	codeMissingPermissions = 50013
	// handleTimeout bounds one Handler call.
	handleTimeout = 30 * time.Second
)

// chanInfo is what routing needs to know about a channel.
type chanInfo struct {
	parentID   string // for threads: the channel the thread belongs to
	thread     bool
	threadable bool // a guild text or announcement channel: threads can be started in it
}

func infoOf(c *discordgo.Channel) chanInfo {
	return chanInfo{
		parentID:   c.ParentID,
		thread:     c.IsThread(),
		threadable: c.Type == discordgo.ChannelTypeGuildText || c.Type == discordgo.ChannelTypeGuildNews,
	}
}

// channelInfo looks a channel up: cache, then discordgo's state (filled by
// GUILD_CREATE), then REST.
func (b *Bridge) channelInfo(ctx context.Context, id string) (chanInfo, error) {
	if ci, ok := b.chans.Get(id); ok {
		return ci, nil
	}
	if st := b.session.State; st != nil {
		if c, err := st.Channel(id); err == nil {
			st.RLock()
			ci := infoOf(c)
			st.RUnlock()
			b.chans.Add(id, ci)
			return ci, nil
		}
	}
	c, err := b.session.Channel(id, discordgo.WithContext(ctx))
	if err != nil {
		return chanInfo{}, fmt.Errorf("look up discord channel %s: %w", id, err)
	}
	ci := infoOf(c)
	b.chans.Add(id, ci)
	return ci, nil
}

// handleMessage routes one MESSAGE_CREATE (see the package doc). It runs
// on the single message worker, so messages reach the core in order;
// stopping is closed when Run stops (see deliver).
func (b *Bridge) handleMessage(ctx context.Context, h bridges.Handler, m *discordgo.Message, stopping <-chan struct{}) {
	if m == nil || m.Author == nil {
		return
	}
	botID := b.BotUserID()
	if m.Author.ID == botID || m.Author.Bot || m.WebhookID != "" {
		return
	}
	if m.Type != discordgo.MessageTypeDefault && m.Type != discordgo.MessageTypeReply {
		return
	}
	if _, dup := b.recent.Get(m.ID); dup {
		b.log.Debug("discord message replayed; dropped", "msg_id", m.ID)
		return
	}
	log := b.log.With("msg_id", m.ID, "channel", m.ChannelID)
	mentioned := mentionsBot(m, botID)
	text := stripMention(m.Content, botID)

	var key bridges.ConversationKey
	if m.GuildID == "" {
		key = bridges.ConversationKey{Bot: b.name, Channel: m.ChannelID}
	} else {
		ci, err := b.channelInfo(ctx, m.ChannelID)
		if err != nil {
			log.Warn("discord message dropped: unknown channel", "err", err)
			return
		}
		switch {
		case ci.thread:
			key = bridges.ConversationKey{Bot: b.name, Channel: ci.parentID, Thread: m.ChannelID}
			if !mentioned {
				owns, err := h.Owns(ctx, key)
				if err != nil {
					log.Warn("discord message dropped: thread ownership unknown", "err", err)
					return
				}
				if !owns {
					b.recent.Add(m.ID, struct{}{})
					return
				}
			}
		case !mentioned:
			b.recent.Add(m.ID, struct{}{})
			return
		case !h.Allowed(bridges.ConversationKey{Bot: b.name, Channel: m.ChannelID}, m.Author.ID):
			// Access first: a stranger gets no thread. The message
			// reaches the core keyed by the channel; Discord has no
			// private notice outside an interaction, so nobody answers.
			key = bridges.ConversationKey{Bot: b.name, Channel: m.ChannelID}
		default:
			key = b.startThread(ctx, m, text, ci, stopping)
		}
	}

	in := bridges.Inbound{Key: key, MsgID: m.ID, UserID: m.Author.ID, At: m.Timestamp}
	if h.Allowed(key, m.Author.ID) { // a stranger's message reaches the core bare
		in.UserName, in.Text, in.Files = displayName(m), text, attachments(m)
		in.ReplyTo, in.Quoted = replyOf(m)
		in.Files = append(in.Files, quotedFiles(m.ReferencedMessage)...)
	}
	if b.deliver(ctx, h, in, stopping) {
		b.recent.Add(m.ID, struct{}{})
	}
}

// startThread starts the conversation thread on message m in a guild
// channel and returns its key. A transient failure (5xx, 429, a network
// error, a timeout) is retried with back-off like any post, for as long as
// it lasts: the message and those behind it wait for the thread, so that
// an outage never turns a conversation into a loose channel message. Only
// an answer no retry can fix — Missing Permissions (403, code 50013,
// without Create Public Threads) or another 4xx — makes the channel
// itself the conversation, as does a channel without threads or the
// bridge stopping (stopping closed or ctx done) while it waits; the
// answers there reply to the message (Post with Message.ReplyTo).
func (b *Bridge) startThread(ctx context.Context, m *discordgo.Message, text string, ci chanInfo, stopping <-chan struct{}) bridges.ConversationKey {
	inChannel := bridges.ConversationKey{Bot: b.name, Channel: m.ChannelID}
	if !ci.threadable {
		return inChannel
	}
	name := threadName(text, displayName(m))
	log := b.log.With("channel", m.ChannelID, "msg_id", m.ID)
	pause := b.deliverPause
	for attempt := 1; ; attempt++ {
		// No type: a thread started on a message takes it from the parent
		// (public thread, or announcement thread in an announcement channel).
		th, err := b.session.MessageThreadStartComplex(m.ChannelID, m.ID, &discordgo.ThreadStart{
			Name:                name,
			AutoArchiveDuration: threadArchiveMinutes,
		}, discordgo.WithContext(ctx))
		switch {
		case err == nil:
			b.chans.Add(th.ID, infoOf(th))
			if attempt > 1 {
				log.Info("discord: thread started after Discord answered again", "attempts", attempt)
			}
			return bridges.ConversationKey{Bot: b.name, Channel: m.ChannelID, Thread: th.ID}
		case restCode(err) == codeThreadAlreadyCreated:
			// A thread started on a message has the message's id (also
			// one an earlier attempt made, its answer lost).
			b.chans.Add(m.ID, chanInfo{parentID: m.ChannelID, thread: true})
			return bridges.ConversationKey{Bot: b.name, Channel: m.ChannelID, Thread: m.ID}
		case restCode(err) == codeMissingPermissions:
			log.Warn("discord: could not start a thread; answering in the channel (does the bot have Create Public Threads?)", "err", err)
			return inChannel
		case isPermanent(err):
			log.Warn("discord: Discord refused the thread; answering in the channel", "err", err)
			return inChannel
		case ctx.Err() != nil || isClosed(stopping):
			log.Warn("discord: no thread started before the bridge stopped; answering in the channel", "attempts", attempt, "err", err)
			return inChannel
		}
		if attempt == 1 {
			log.Warn("discord: could not start a thread (Discord unavailable); retrying until it answers", "err", err)
		} else {
			log.Debug("discord: thread start retried", "attempt", attempt, "err", err)
		}
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
		case <-stopping:
		case <-t.C:
		}
		t.Stop()
		pause = min(2*pause, maxFullPause)
	}
}

// restCode is the JSON error code of a Discord REST error, or 0.
func restCode(err error) int {
	var re *discordgo.RESTError
	if errors.As(err, &re) && re.Message != nil {
		return re.Message.Code
	}
	return 0
}

// deliver hands in to the core, retrying a few times when it fails (a
// busy database); it reports whether the core accepted it. Discord never
// sends a message again, so one the core refuses for want of disk space
// (bridges.ErrStorageFull) is held here, retried with back-off up to
// maxFullPause, until it is recorded or the bridge stops (stopping closed
// or ctx done): the worker, and the messages queued behind it, wait.
func (b *Bridge) deliver(ctx context.Context, h bridges.Handler, in bridges.Inbound, stopping <-chan struct{}) bool {
	pause := b.deliverPause
	held := false
	for attempt := 1; ; attempt++ {
		hctx, cancel := context.WithTimeout(ctx, handleTimeout)
		err := h.HandleMessage(hctx, in)
		cancel()
		if err == nil {
			if held {
				b.log.Info("discord message recorded after the disk had room again", "key", in.Key, "msg_id", in.MsgID, "attempts", attempt)
			}
			return true
		}
		full := errors.Is(err, bridges.ErrStorageFull) && !isClosed(stopping)
		if (!full && attempt >= b.deliverTries) || ctx.Err() != nil {
			b.log.Error("discord message not accepted by the bridge; dropped", "key", in.Key, "msg_id", in.MsgID, "attempts", attempt, "err", err)
			return false
		}
		switch {
		case full && !held:
			held = true
			b.log.Warn("discord message held until the disk has room", "key", in.Key, "msg_id", in.MsgID, "err", err)
		case !full:
			b.log.Warn("discord message not accepted; retrying", "key", in.Key, "msg_id", in.MsgID, "err", err)
		}
		select {
		case <-ctx.Done():
		case <-stopping:
		case <-time.After(pause):
		}
		pause = min(2*pause, maxFullPause)
	}
}

// maxFullPause caps the pause between attempts to record a message.
const maxFullPause = 15 * time.Second

// isClosed reports whether ch is closed.
func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// mentionsBot reports whether m mentions the bot user.
func mentionsBot(m *discordgo.Message, botID string) bool {
	if botID == "" {
		return false
	}
	for _, u := range m.Mentions {
		if u != nil && u.ID == botID {
			return true
		}
	}
	return strings.Contains(m.Content, "<@"+botID+">") || strings.Contains(m.Content, "<@!"+botID+">")
}

// stripMention removes the bot's mentions (<@id> and <@!id>) and trims.
func stripMention(content, botID string) string {
	if botID != "" {
		for _, tag := range []string{"<@" + botID + ">", "<@!" + botID + ">"} {
			content = strings.ReplaceAll(content, tag+" ", "")
			content = strings.ReplaceAll(content, tag, "")
		}
	}
	return strings.TrimSpace(content)
}

// displayName is the author's server nickname, global display name or
// username, in that order.
func displayName(m *discordgo.Message) string {
	if m.Member != nil && m.Member.Nick != "" {
		return m.Member.Nick
	}
	if m.Author.GlobalName != "" {
		return m.Author.GlobalName
	}
	return m.Author.Username
}

// replyOf is the id and the quoted context of the message m replies to
// (a MessageReference of the default type, with the ReferencedMessage
// Discord includes): "AUTHOR wrote:" and its text, naming its attachments
// (quotedFiles hands them over). A reply to a deleted message has an id
// but no context; a message that replies to nothing gives "", "".
func replyOf(m *discordgo.Message) (id, quoted string) {
	ref := m.MessageReference
	if ref == nil || ref.Type != discordgo.MessageReferenceTypeDefault {
		return "", ""
	}
	q := m.ReferencedMessage
	if q == nil || q.Author == nil {
		return ref.MessageID, ""
	}
	var b strings.Builder
	b.WriteString(displayName(q) + " wrote:\n")
	for _, f := range quotedFiles(q) {
		b.WriteString("[" + strings.TrimPrefix(f.Name, quotedPrefix) + ", attached as " + f.Name + "]\n")
	}
	b.WriteString(strings.TrimSpace(q.Content))
	return ref.MessageID, strings.TrimSpace(b.String())
}

// quotedPrefix starts the name of a quoted attachment given to the agent.
const quotedPrefix = "quoted-"

// quotedFiles are the attachments of the quoted message q (nil for none),
// named "quoted-NAME" so that the agent tells them from the author's own.
func quotedFiles(q *discordgo.Message) []bridges.File {
	if q == nil {
		return nil
	}
	fs := attachments(q)
	for i := range fs {
		name := fs[i].Name
		if name == "" {
			name = "file"
		}
		fs[i].Name = quotedPrefix + name
	}
	return fs
}

// attachments are m's files; a voice message's audio (message flag
// IS_VOICE_MESSAGE, 1<<13: an Ogg Opus file with a duration and a
// waveform) is marked Voice, which the core transcribes.
func attachments(m *discordgo.Message) []bridges.File {
	var out []bridges.File
	voice := m.Flags&discordgo.MessageFlagsIsVoiceMessage != 0
	for _, a := range m.Attachments {
		if a == nil {
			continue
		}
		out = append(out, bridges.File{
			ID:       a.ID,
			Name:     a.Filename,
			MimeType: a.ContentType,
			Size:     int64(a.Size),
			URL:      a.URL,
			Voice:    voice || a.DurationSecs > 0 && a.Waveform != "",
		})
	}
	return out
}

// threadName makes a thread name from the first words of text: one line,
// mentions and markup characters dropped, at most 100 characters, cut at a
// word boundary. An empty text gives "Conversation with NAME".
func threadName(text, author string) string {
	var words []string
	for _, w := range strings.Fields(text) {
		if strings.HasPrefix(w, "<@") || strings.HasPrefix(w, "<#") {
			continue // user, role and channel mentions read badly in a title
		}
		w = strings.TrimFunc(w, func(r rune) bool { return strings.ContainsRune("*_~`>#|", r) || unicode.IsControl(r) })
		if w != "" {
			words = append(words, w)
		}
	}
	name := ""
	for _, w := range words {
		next := w
		if name != "" {
			next = name + " " + w
		}
		if len([]rune(next)) > maxThreadName {
			if name == "" { // one very long word
				name = string([]rune(w)[:maxThreadName-1]) + "…"
			} else if len([]rune(name)) < maxThreadName {
				name += "…"
			}
			break
		}
		name = next
	}
	if name == "" {
		name = "Conversation with " + author
		if r := []rune(name); len(r) > maxThreadName {
			name = string(r[:maxThreadName])
		}
	}
	return name
}
