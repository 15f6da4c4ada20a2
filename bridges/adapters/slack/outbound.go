package slack

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	slackapi "github.com/slack-go/slack"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/internal/textcut"
)

// emptyText stands in for an empty message: Slack refuses no_text.
const emptyText = "…"

// Post implements bridges.Platform. The message goes into key.Thread (at
// top level when it is ""). Text is converted to mrkdwn; when the result
// is over 4,000 characters it is split and posted as several messages,
// and the returned ref is the last one. A card (Buttons) is one message
// of section blocks and an actions block; its text is capped at 12,000
// characters. A 429 is retried after Retry-After until ctx ends.
//
// With m.Idem every part carries the key in its metadata, and with
// m.Retry the parts already in the conversation are not posted again
// (idem.go). Errors no retry can fix are marked bridges.Permanent.
func (b *Bridge) Post(ctx context.Context, key bridges.ConversationKey, m bridges.Message) (bridges.MessageRef, error) {
	var parts [][]slackapi.MsgOption
	if len(m.Buttons) > 0 {
		text, blocks := cardBlocks(m)
		parts = append(parts, []slackapi.MsgOption{slackapi.MsgOptionText(text, false), slackapi.MsgOptionBlocks(blocks...)})
	} else {
		chunks := splitMrkdwn(ToMrkdwn(m.Text), maxTextRunes)
		if len(chunks) == 0 {
			chunks = []string{emptyText}
		}
		for _, c := range chunks {
			parts = append(parts, []slackapi.MsgOption{slackapi.MsgOptionText(c, false)})
		}
	}
	done, err := b.alreadyPosted(ctx, key, m)
	if err != nil {
		return bridges.MessageRef{}, classify(err, fmt.Errorf("slack post to %s: %w", key, err))
	}
	var ref bridges.MessageRef
	for i, opts := range parts {
		if ts, ok := done[i]; ok {
			b.log.Info("slack reply part already posted; not posting it again", slog.String("key", key.String()), slog.Int("part", i+1))
			ref = bridges.MessageRef{Key: key, ID: ts}
			continue
		}
		if key.Thread != "" {
			opts = append(opts, slackapi.MsgOptionTS(key.Thread))
		}
		if m.Idem != "" {
			opts = append(opts, replyMetadata(m.Idem, i))
		}
		var ts string
		err := b.retry(ctx, "chat.postMessage", nil, func() error {
			var err error
			_, ts, err = b.api.PostMessageContext(ctx, key.Channel, opts...)
			return err
		})
		if err != nil {
			return ref, classify(err, fmt.Errorf("slack post to %s (part %d of %d): %w", key, i+1, len(parts), err))
		}
		ref = bridges.MessageRef{Key: key, ID: ts}
		b.repliedIn(key)
	}
	return ref, nil
}

// Edit implements bridges.Platform: chat.update with the new text and
// buttons; without buttons the blocks are removed. Edit cannot split, so
// a text over Slack's limit is cut at 39,000 characters. When a 429
// delays an Edit and a newer Edit of the same message starts meanwhile,
// the older one is dropped (returns nil).
func (b *Bridge) Edit(ctx context.Context, ref bridges.MessageRef, m bridges.Message) error {
	var opts []slackapi.MsgOption
	if len(m.Buttons) > 0 {
		text, blocks := cardBlocks(m)
		opts = []slackapi.MsgOption{slackapi.MsgOptionText(text, false), slackapi.MsgOptionBlocks(blocks...)}
	} else {
		text := ToMrkdwn(m.Text)
		if strings.TrimSpace(text) == "" {
			text = emptyText
		}
		if utf8.RuneCountInString(text) > maxEditRunes {
			text = splitMrkdwn(text, maxEditRunes)[0]
		}
		opts = []slackapi.MsgOption{slackapi.MsgOptionText(text, false), slackapi.MsgOptionBlocks()}
	}
	superseded, end := b.editGen.begin(ref.Key.Channel + "/" + ref.ID)
	defer end()
	err := b.retry(ctx, "chat.update", superseded, func() error {
		_, _, _, err := b.api.UpdateMessageContext(ctx, ref.Key.Channel, ref.ID, opts...)
		return err
	})
	if errors.Is(err, errSuperseded) {
		b.log.Debug("slack edit dropped for a newer one", slog.String("msg_id", ref.ID))
		return nil
	}
	if err != nil {
		return classify(err, fmt.Errorf("slack edit %s in %s: %w", ref.ID, ref.Key, err))
	}
	return nil
}

// PostEphemeral implements bridges.Ephemeral with chat.postEphemeral: only
// user sees text, in key's thread (or in the channel when key.Thread is
// ""), and Slack does not keep it.
func (b *Bridge) PostEphemeral(ctx context.Context, key bridges.ConversationKey, user, text string) error {
	return b.ephemeral(ctx, key.Channel, key.Thread, user, text)
}

// ephemeral posts text privately to user in a channel (thread).
func (b *Bridge) ephemeral(ctx context.Context, channel, thread, user, text string) error {
	chunks := splitMrkdwn(ToMrkdwn(text), maxTextRunes)
	if len(chunks) == 0 {
		chunks = []string{emptyText}
	}
	for _, c := range chunks {
		opts := []slackapi.MsgOption{slackapi.MsgOptionText(c, false)}
		if thread != "" {
			opts = append(opts, slackapi.MsgOptionTS(thread))
		}
		err := b.retry(ctx, "chat.postEphemeral", nil, func() error {
			_, err := b.api.PostEphemeralContext(ctx, channel, user, opts...)
			return err
		})
		if err != nil {
			return fmt.Errorf("slack ephemeral to %s in %s: %w", user, channel, err)
		}
	}
	return nil
}

// retry runs call, and again after Retry-After each time Slack answers
// 429, until it succeeds, fails otherwise, ctx ends, or superseded (if
// set) reports a newer call (errSuperseded).
func (b *Bridge) retry(ctx context.Context, method string, superseded func() bool, call func() error) error {
	for {
		err := call()
		rl, limited := errors.AsType[*slackapi.RateLimitedError](err)
		if !limited {
			return err
		}
		wait := max(rl.RetryAfter, time.Second)
		b.log.Warn("slack rate limited", slog.String("method", method), slog.Duration("retry_after", wait))
		if !bridges.Sleep(ctx, wait) {
			return fmt.Errorf("%s rate limited: %w", method, ctx.Err())
		}
		if superseded != nil && superseded() {
			return errSuperseded
		}
	}
}

// cardBlocks renders a card: section blocks with the mrkdwn text (≤ 3,000
// characters each, 12,000 in total) and actions blocks with the buttons
// (block_id "card:<CardID>", action_id = Button.ID, value = CardID|ID).
// It also returns the notification text.
func cardBlocks(m bridges.Message) (string, []slackapi.Block) {
	text := ToMrkdwn(m.Text)
	var blocks []slackapi.Block
	total := 0
	for _, s := range splitMrkdwn(text, maxSectionRunes) {
		n := utf8.RuneCountInString(s)
		if total+n > maxCardRunes {
			blocks = append(blocks, section("_…(truncated)_"))
			break
		}
		total += n
		blocks = append(blocks, section(s))
	}
	blockID := "card:" + truncateBytes(m.CardID, 200)
	for i := 0; i < len(m.Buttons); i += maxButtonsPerBlock {
		var elems []slackapi.BlockElement
		for _, btn := range m.Buttons[i:min(i+maxButtonsPerBlock, len(m.Buttons))] {
			label := btn.Label
			if label == "" {
				label = btn.ID
			}
			e := slackapi.NewButtonBlockElement(btn.ID, m.CardID+"|"+btn.ID,
				slackapi.NewTextBlockObject(slackapi.PlainTextType, textcut.Truncate(label, maxButtonRunes), true, false))
			switch btn.Style {
			case bridges.StylePrimary:
				e = e.WithStyle(slackapi.StylePrimary)
			case bridges.StyleDanger:
				e = e.WithStyle(slackapi.StyleDanger)
			}
			elems = append(elems, e)
		}
		id := blockID
		if i > 0 {
			id = fmt.Sprintf("%s:%d", blockID, i/maxButtonsPerBlock)
		}
		blocks = append(blocks, slackapi.NewActionBlock(id, elems...))
	}
	notify := emptyText
	if chunks := splitMrkdwn(text, maxSectionRunes); len(chunks) > 0 {
		notify = chunks[0]
	}
	return notify, blocks
}

func section(text string) *slackapi.SectionBlock {
	return slackapi.NewSectionBlock(slackapi.NewTextBlockObject(slackapi.MarkdownType, text, false, false), nil, nil)
}

// editGens numbers Edits per message so that a rate-limited Edit can
// give way to a newer one.
type editGens struct {
	mu   sync.Mutex
	next uint64            // numbers are unique across messages
	gen  map[string]uint64 // message → number of its newest Edit in flight
}

// begin registers an Edit of msg. superseded reports whether a newer Edit
// of msg started since; end must be called when the Edit is over.
func (g *editGens) begin(msg string) (superseded func() bool, end func()) {
	g.mu.Lock()
	g.next++
	mine := g.next
	g.gen[msg] = mine
	g.mu.Unlock()
	superseded = func() bool {
		g.mu.Lock()
		defer g.mu.Unlock()
		return g.gen[msg] != mine
	}
	end = func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		if g.gen[msg] == mine {
			delete(g.gen, msg)
		}
	}
	return superseded, end
}

// StartThread implements bridges.ThreadStarter: the message is posted at
// the top of the channel and its ts becomes the thread of the new
// conversation (like a mention that starts a conversation).
func (b *Bridge) StartThread(ctx context.Context, in bridges.ConversationKey, m bridges.Message) (bridges.ConversationKey, bridges.MessageRef, error) {
	in.Thread = ""
	ref, err := b.Post(ctx, in, m)
	if err != nil {
		return in, ref, err
	}
	return bridges.ConversationKey{Bot: in.Bot, Channel: in.Channel, Thread: ref.ID}, ref, nil
}
