package slack

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	slackapi "github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/internal/lru"
)

// incoming is a message or app_mention event reduced to what routing
// needs.
type incoming struct {
	mention     bool // an app_mention event
	channel     string
	channelType string // im, mpim, channel, group ("" for app_mention)
	user        string
	botID       string
	subtype     string
	text        string
	ts          string
	threadTS    string
	files       []slackapi.File
	attachments []slackapi.Attachment // shared (forwarded) messages and unfurls
}

func fromMessageEvent(e *slackevents.MessageEvent) incoming {
	in := incoming{
		channel:     e.Channel,
		channelType: e.ChannelType,
		user:        e.User,
		botID:       e.BotID,
		subtype:     e.SubType,
		text:        e.Text,
		ts:          e.TimeStamp,
		threadTS:    e.ThreadTimeStamp,
	}
	if e.Message != nil {
		in.files = e.Message.Files
		in.attachments = e.Message.Attachments
		if in.botID == "" {
			in.botID = e.Message.BotID
		}
	}
	return in
}

func fromMentionEvent(e *slackevents.AppMentionEvent) incoming {
	return incoming{
		mention:  true,
		channel:  e.Channel,
		user:     e.User,
		botID:    e.BotID,
		text:     e.Text,
		ts:       e.TimeStamp,
		threadTS: e.ThreadTimeStamp,
		files:    e.Files,

		attachments: e.Attachments,
	}
}

// userSubtype reports whether a message subtype is a user talking.
func userSubtype(subtype string) bool {
	switch subtype {
	case "", "file_share", "thread_broadcast":
		return true
	}
	return false
}

// route decides whether the bot should see a message and hands it to the
// core. It returns an error only when the message must not be
// acknowledged (the core did not accept it; Slack will resend it).
//
// The whole decision, core calls included, is bounded by handlerTimeout
// so that the envelope is acked within Slack's 3 s or left for a retry.
func (b *Bridge) route(ctx context.Context, h bridges.Handler, in incoming) error {
	self := b.identity()
	if !userSubtype(in.subtype) || in.botID != "" || in.user == "" || in.user == self.userID || in.ts == "" {
		return nil // bots (ourselves included), edits, deletions, joins…
	}
	dedupe := in.channel + "/" + in.ts
	if b.seen.Contains(dedupe) {
		return nil // a retry, or the app_mention twin of a message event
	}
	isDM := in.channelType == "im" || (in.channelType == "" && strings.HasPrefix(in.channel, "D"))
	inThread := in.threadTS != "" && in.threadTS != in.ts
	mentioned := in.mention || mentions(in.text, self.userID)

	ctx, cancel := context.WithTimeout(ctx, b.handlerTimeout)
	defer cancel()
	key := bridges.ConversationKey{Bot: b.name, Channel: in.channel}
	allowed := h.Allowed(key, in.user)
	quoteParent := false // a mention in a thread the bot does not own: its parent is the context
	switch {
	case isDM:
		if inThread {
			key.Thread = in.threadTS
		}
	case inThread:
		key.Thread = in.threadTS
		if mentioned && allowed {
			quoteParent = b.foreignThread(ctx, h, key)
		}
		if !mentioned {
			owned, err := h.Owns(ctx, key)
			if err != nil {
				return fmt.Errorf("check thread ownership: %w", err)
			}
			if !owned {
				return nil
			}
		}
	case mentioned:
		if allowed {
			key.Thread = in.ts // the mention starts a thread on itself
		} // a stranger's starts none: the core answers in the channel
	default:
		return nil // top-level channel chatter
	}

	m := bridges.Inbound{
		Key:    key,
		MsgID:  in.channel + ":" + in.ts,
		UserID: in.user,
		At:     tsTime(in.ts),
	}
	// A stranger's message reaches the core bare, for it to count and
	// answer privately: no lookups, no files, no working indicator.
	if allowed {
		m.UserName = b.userName(ctx, in.user)
		m.Text = b.plainText(ctx, in.text, self.userID)
		m.Files = files(in.files)
		var quotes []quote
		if quoteParent {
			if q, ok := b.threadParent(ctx, in.channel, in.threadTS); ok {
				m.ReplyTo = in.channel + ":" + in.threadTS
				quotes = append(quotes, q)
			}
		}
		quotes = append(quotes, b.shared(ctx, in.attachments, self.userID)...)
		m.Quoted, m.Files = joinQuotes(quotes, m.Files)
		// Remembered first: the core may show the working indicator (a
		// reaction on this message) before HandleMessage returns.
		b.latest.Add(key.String(), in.ts)
	}
	if err := h.HandleMessage(ctx, m); err != nil {
		return fmt.Errorf("handle message: %w", err)
	}
	b.seen.Add(dedupe, struct{}{})
	b.log.Debug("slack message delivered", slog.Any("key", key), slog.String("msg_id", in.ts))
	return nil
}

// mentions reports whether text mentions the user id (<@U…> or <@U…|name>).
func mentions(text, userID string) bool {
	if userID == "" {
		return false
	}
	return strings.Contains(text, "<@"+userID+">") || strings.Contains(text, "<@"+userID+"|")
}

func (b *Bridge) userName(ctx context.Context, id string) string {
	return b.users.Name(ctx, id, func(ctx context.Context, id string) (string, error) {
		u, err := b.api.GetUserInfoContext(ctx, id)
		if err != nil {
			return "", err
		}
		for _, n := range []string{u.Profile.DisplayName, u.RealName, u.Profile.RealName, u.Name} {
			if n != "" {
				return n, nil
			}
		}
		return "", nil
	})
}

func files(in []slackapi.File) []bridges.File {
	var out []bridges.File
	for _, f := range in {
		url := f.URLPrivateDownload
		if url == "" {
			url = f.URLPrivate
		}
		out = append(out, bridges.File{ID: f.ID, Name: f.Name, MimeType: f.Mimetype, Size: int64(f.Size), URL: url})
	}
	return out
}

// tsTime converts a Slack ts ("1700000000.000100") to a time.
func tsTime(ts string) time.Time {
	sec, frac, _ := strings.Cut(ts, ".")
	s, err := strconv.ParseInt(sec, 10, 64)
	if err != nil {
		return time.Time{}
	}
	us, _ := strconv.ParseInt((frac + "000000")[:6], 10, 64)
	return time.Unix(s, us*1000)
}

// plainText turns Slack event text into the plain text the agent sees
// (convertSlackText), looking up the names of mentioned users.
func (b *Bridge) plainText(ctx context.Context, text, selfID string) string {
	return convertSlackText(text, selfID, func(id string) string { return b.userName(ctx, id) })
}

// userCache maps user ids to display names, for at most cap users (the
// least recently used are forgotten). Lookups that fail are cached for a
// shorter time (the id stands in for the name).
type userCache struct {
	ttl     time.Duration
	entries *lru.Cache[string, userEntry]
}

type userEntry struct {
	name    string
	expires time.Time
}

func newUserCache(cap int, ttl time.Duration) *userCache {
	return &userCache{ttl: ttl, entries: lru.New[string, userEntry](cap)}
}

// Name returns the cached name of id, or calls lookup (bounded by a short
// timeout) and caches its answer. It never fails: the id is the fallback.
func (c *userCache) Name(ctx context.Context, id string, lookup func(context.Context, string) (string, error)) string {
	if id == "" {
		return ""
	}
	now := time.Now()
	if e, ok := c.entries.Get(id); ok && now.Before(e.expires) {
		return e.name
	}
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	name, err := lookup(ctx, id)
	ttl := c.ttl
	if err != nil || name == "" {
		name, ttl = id, c.ttl/12
	}
	c.entries.Add(id, userEntry{name: name, expires: now.Add(ttl)})
	return name
}

// quote is a message the user's message quotes: its author and text as
// the agent reads them, and its files.
type quote struct {
	author string
	text   string
	files  []bridges.File
}

// quotedPrefix starts the name of a quoted file given to the agent.
const quotedPrefix = "quoted-"

// parentTimeout bounds the look-up of a thread's parent message, inside
// the handler's budget.
const parentTimeout = time.Second

// joinQuotes renders quotes for Inbound.Quoted, each as "AUTHOR wrote:"
// with the files it carries named, and appends their files, renamed
// "quoted-NAME", to own.
func joinQuotes(quotes []quote, own []bridges.File) (string, []bridges.File) {
	var parts []string
	for _, q := range quotes {
		var b strings.Builder
		b.WriteString(q.author + " wrote:\n")
		for _, f := range q.files {
			name := f.Name
			if name == "" {
				name = "file"
			}
			f.Name = quotedPrefix + name
			b.WriteString("[" + name + ", attached as " + f.Name + "]\n")
			own = append(own, f)
		}
		b.WriteString(q.text)
		parts = append(parts, strings.TrimSpace(b.String()))
	}
	return strings.Join(parts, "\n\n"), own
}

// foreignThread reports whether the core does not own the thread key (a
// thread the bot did not start). A failed look-up counts as owned: no
// context is fetched.
func (b *Bridge) foreignThread(ctx context.Context, h bridges.Handler, key bridges.ConversationKey) bool {
	owned, err := h.Owns(ctx, key)
	if err != nil {
		b.log.Warn("slack thread ownership unknown; its parent is not quoted", slog.Any("key", key), slog.Any("err", err))
		return false
	}
	return !owned
}

// threadParent is the parent message of the thread threadTS in channel,
// read with conversations.replies (limit 1) and cached. ok is false when
// it cannot be read (logged): the message then reaches the core without
// it.
func (b *Bridge) threadParent(ctx context.Context, channel, threadTS string) (quote, bool) {
	ck := channel + "/" + threadTS
	if q, ok := b.parents.Get(ck); ok {
		return q, true
	}
	ctx, cancel := context.WithTimeout(ctx, parentTimeout)
	defer cancel()
	msgs, _, _, err := b.api.GetConversationRepliesContext(ctx, &slackapi.GetConversationRepliesParameters{
		ChannelID: channel, Timestamp: threadTS, Limit: 1, Inclusive: true,
	})
	if err != nil {
		b.log.Warn("slack thread parent not read; the mention reaches the agent without it",
			slog.String("channel", channel), slog.String("thread_ts", threadTS), slog.String("err", b.redact.Err(err)))
		return quote{}, false
	}
	if len(msgs) == 0 || msgs[0].Timestamp != threadTS {
		return quote{}, false
	}
	p := msgs[0]
	author := p.Username
	if p.User != "" {
		author = b.userName(ctx, p.User)
	}
	if author == "" {
		author = "someone"
	}
	q := quote{author: author, text: b.plainText(ctx, p.Text, b.identity().userID), files: files(p.Files)}
	b.parents.Add(ck, q)
	return q, true
}

// shared are the messages a message shares (attachments with is_share)
// or links to (is_msg_unfurl), with the text and files Slack includes.
func (b *Bridge) shared(ctx context.Context, atts []slackapi.Attachment, selfID string) []quote {
	var out []quote
	for _, a := range atts {
		if !a.IsShare && !a.IsMsgUnfurl {
			continue
		}
		author := a.AuthorName
		if author == "" && a.AuthorID != "" {
			author = b.userName(ctx, a.AuthorID)
		}
		if author == "" {
			author = "someone"
		}
		q := quote{author: author, text: b.plainText(ctx, a.Text, selfID), files: files(a.Files)}
		if q.text == "" && len(q.files) == 0 {
			continue
		}
		out = append(out, q)
	}
	return out
}
