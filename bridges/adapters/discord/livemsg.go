package discord

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/bwmarrin/discordgo"

	"github.com/agentbridge/agentbridge/bridges"
)

// A turn's live message on Discord (the core posts it and edits it as the
// turn grows) ends with liveMarker while it grows. Its first post carries
// the turn's key as a nonce with enforce_nonce (bridges.Message.Live), so
// that a new holder running the turn again after its holder died gets
// that message back: still open (ending with the marker), it takes it
// over by editing it; closed (CloseStream) or finished, it creates the
// next message under the next nonce. A cut live message is closed by
// CloseStream: the marker replaced by the core's note.

// liveMarker ends a live message while its turn runs (the core's " …").
const liveMarker = "…"

// maxLiveNonces bounds the nonces a live post tries past messages that
// are closed or finished (one per holder that died running the turn).
const maxLiveNonces = 8

var _ bridges.StreamCloser = (*Bridge)(nil)

// shownText is the text a message shows: its content, or the text
// displays of a Components V2 message.
func shownText(m *discordgo.Message) string {
	if m.Flags&flagV2 == 0 {
		return m.Content
	}
	var b strings.Builder
	var walk func([]discordgo.MessageComponent)
	walk = func(cs []discordgo.MessageComponent) {
		for _, c := range cs {
			switch c := c.(type) {
			case *discordgo.TextDisplay:
				b.WriteString(c.Content)
			case *discordgo.Container:
				walk(c.Components)
			}
		}
	}
	walk(m.Components)
	return b.String()
}

// isOpen reports whether text is a live message still growing.
func isOpen(text string) bool {
	return strings.HasSuffix(strings.TrimRight(text, " \n"), liveMarker)
}

// liveNonce is the nonce of the try-th create of a live message under key
// idem: the first is the one an ordinary post of idem would use.
func liveNonce(idem string, try int) string {
	if try == 0 {
		return nonceOf(idem, 0)
	}
	return nonceOf(fmt.Sprintf("%s#%d", idem, try), 0)
}

// postLive creates a turn's live message (m.Live with m.Idem, one part
// text, already converted) through create, which sends one create with the
// nonce it is given. A message Discord returns for a nonce used before
// that does not show text is an earlier holder's: taken over when still
// open, else passed for the next nonce.
func (b *Bridge) postLive(ctx context.Context, ref bridges.MessageRef, text string, m bridges.Message,
	create func(nonce string) (*discordgo.Message, error)) (*discordgo.Message, error) {
	for try := 0; ; try++ {
		msg, err := create(liveNonce(m.Idem, try))
		if err != nil {
			return nil, err
		}
		shown := shownText(msg)
		if shown == text {
			return msg, nil // created now (or the same text already)
		}
		if isOpen(shown) {
			b.log.Info("discord: taking over the live message a cut turn left open", "msg_id", msg.ID)
			ref.ID = msg.ID
			if err := b.Edit(ctx, ref, bridges.Message{Text: m.Text}); err != nil {
				return nil, fmt.Errorf("take over the live message %s: %w", msg.ID, err)
			}
			return msg, nil
		}
		if try+1 >= maxLiveNonces {
			return msg, fmt.Errorf("live message: %d earlier messages under its key: %w", maxLiveNonces, ErrBadMessage)
		}
		b.log.Debug("discord: the live message's key names a closed message; the next key", "msg_id", msg.ID)
	}
}

// CloseStream implements bridges.StreamCloser for a live message a cut
// turn left open: its text, still ending with liveMarker, gets note
// instead of the marker. A message that no longer ends with it (finished,
// or closed already) or is gone is left alone.
func (b *Bridge) CloseStream(ctx context.Context, ref bridges.MessageRef, note string) (err error) {
	defer func() { err = classify(err) }()
	ch := channelOf(ref.Key)
	if ch == "" || ref.ID == "" {
		return fmt.Errorf("discord close %s: %w: incomplete message reference", ref.ID, ErrBadMessage)
	}
	msg, err := b.session.ChannelMessage(ch, ref.ID, discordgo.WithContext(ctx))
	if re, ok := errors.AsType[*discordgo.RESTError](err); ok && re.Response != nil && re.Response.StatusCode == http.StatusNotFound {
		return nil // gone: nothing to close
	}
	if err != nil {
		return fmt.Errorf("discord close %s/%s: read it: %w", ch, ref.ID, err)
	}
	shown := shownText(msg)
	if !isOpen(shown) {
		return nil
	}
	text := strings.TrimSuffix(strings.TrimRight(shown, " \n"), liveMarker)
	text = strings.TrimRight(text, " \n") + toDiscord(note)
	v2 := msg.Flags&flagV2 != 0
	if v2 {
		b.v2.Add(msg.ID, struct{}{})
	}
	if v2 || utf8.RuneCountInString(text) > maxContentRunes {
		err = b.editV2(ctx, ch, ref.ID, truncateMessage(text, maxV2Text), bridges.Message{})
	} else {
		comps := []discordgo.MessageComponent{}
		_, err = b.session.ChannelMessageEditComplex(&discordgo.MessageEdit{
			ID: ref.ID, Channel: ch, Content: &text, Components: &comps, AllowedMentions: noMentions(),
		}, discordgo.WithContext(ctx))
	}
	if err != nil {
		return fmt.Errorf("discord close %s/%s: %w", ch, ref.ID, err)
	}
	return nil
}
