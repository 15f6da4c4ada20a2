package discord

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/bwmarrin/discordgo"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/internal/textcut"
)

// Cards, and texts longer than an ordinary message's 2,000 characters,
// are Components V2 messages (flag IS_COMPONENTS_V2): one container
// holding the text (a text display), a card's long choices as sections
// (the choice's whole text with its button beside it) and its other
// buttons in action rows. Such a message has no content and no embeds, at
// most maxV2Components components and maxV2Text characters of text, and
// keeps the flag for life: every edit of it is a V2 edit too (the adapter
// remembers the V2 messages it posted or made; after a restart an edit
// Discord refuses for want of the flag is made again as V2). An ordinary
// message becomes one by an edit that sets the flag and clears its
// content.
const (
	flagV2          = discordgo.MessageFlagsIsComponentsV2
	maxV2Components = 40
	maxV2Text       = 4000
	// sectionLabelRunes: a choice longer than this reads better as a
	// section (its text beside a short button) than as a cut button label.
	sectionLabelRunes = 40
	// sectionButtonLabel is the label of a section's button.
	sectionButtonLabel = "Choose"
	v2Remembered       = 4096 // card ids remembered for their edits
)

// v2Card lays out text and m's buttons as Components V2: a container with
// the text (cut with "…" to the room the sections leave) and the buttons.
// Long choices become sections unless that would pass the component
// limit. It never returns an empty list.
func v2Card(text string, m bridges.Message) ([]discordgo.MessageComponent, error) {
	rows, err := components(m)
	if err != nil {
		return nil, err
	}
	var (
		sections []discordgo.MessageComponent
		short    []bridges.Button
		room     = maxV2Text
	)
	for _, btn := range m.Buttons {
		if utf8.RuneCountInString(btn.Label) <= sectionLabelRunes {
			short = append(short, btn)
			continue
		}
		id, err := customID(m.CardID, btn.ID)
		if err != nil {
			return nil, err
		}
		label := textcut.Truncate(btn.Label, maxV2Text/4)
		room -= utf8.RuneCountInString(label)
		sections = append(sections, discordgo.Section{
			Components: []discordgo.MessageComponent{discordgo.TextDisplay{Content: label}},
			Accessory:  discordgo.Button{Label: sectionButtonLabel, Style: buttonStyle(btn.Style), CustomID: id},
		})
	}
	if len(sections) > 0 {
		shortRows, err := components(bridges.Message{CardID: m.CardID, Buttons: short})
		if err != nil {
			return nil, err
		}
		if 2+3*len(sections)+countComponents(shortRows) <= maxV2Components {
			rows = append(sections, shortRows...)
		} else {
			room = maxV2Text // too many: all as buttons in rows
		}
	}
	if strings.TrimSpace(text) == "" {
		text = "​" // a text display needs text; a zero-width space shows none
	}
	inner := append([]discordgo.MessageComponent{discordgo.TextDisplay{Content: truncateMessage(text, room)}}, rows...)
	return []discordgo.MessageComponent{discordgo.Container{Components: inner}}, nil
}

// countComponents counts components with the ones nested in action rows.
func countComponents(cs []discordgo.MessageComponent) int {
	n := 0
	for _, c := range cs {
		n++
		if r, ok := c.(discordgo.ActionsRow); ok {
			n += len(r.Components)
		}
	}
	return n
}

// isV2 reports whether id is a V2 message this adapter posted.
func (b *Bridge) isV2(id string) bool { return b.v2.Contains(id) }

// postV2 posts text as a Components V2 message in ch: a card when m has
// buttons, else the text alone in a container; a reply to reply when not
// nil.
func (b *Bridge) postV2(ctx context.Context, ch, text string, m bridges.Message, nonce string, reply *discordgo.MessageReference) (*discordgo.Message, error) {
	comps, err := v2Card(text, m)
	if err != nil {
		return nil, err
	}
	msg, err := b.sendMessage(ctx, ch, &discordgo.MessageSend{
		Components:      comps,
		Flags:           flagV2,
		AllowedMentions: noMentions(),
		Reference:       reply,
	}, nonce)
	if err != nil {
		return nil, err
	}
	b.v2.Add(msg.ID, struct{}{})
	return msg, nil
}

// editV2 replaces a V2 message's text and buttons, keeping the flag. A
// message not known to be V2 (an ordinary one growing past 2,000
// characters, or one posted before a restart) gets its content cleared
// in the same edit, as Discord requires to set the flag.
func (b *Bridge) editV2(ctx context.Context, ch, id, text string, m bridges.Message) error {
	comps, err := v2Card(text, m)
	if err != nil {
		return err
	}
	edit := &discordgo.MessageEdit{
		ID:              id,
		Channel:         ch,
		Components:      &comps,
		Flags:           flagV2,
		AllowedMentions: noMentions(),
	}
	if !b.isV2(id) {
		edit.Content = new(string)
	}
	_, err = b.session.ChannelMessageEditComplex(edit, discordgo.WithContext(ctx))
	if err != nil {
		return err
	}
	b.v2.Add(id, struct{}{})
	return nil
}

// needsV2 reports whether Discord refused an edit because the message is
// a Components V2 message (its content cannot be set).
func needsV2(err error) bool {
	re, ok := errors.AsType[*discordgo.RESTError](err)
	return ok && re.Message != nil && re.Message.Code == discordgo.ErrCodeInvalidFormBody &&
		strings.Contains(string(re.ResponseBody), "COMPONENTS_V2")
}

// editV2Fallback is Edit's second try of a plain edit Discord refused for
// want of the V2 flag (a card posted before a restart).
func (b *Bridge) editV2Fallback(ctx context.Context, ch, id, text string, m bridges.Message, first error) error {
	if err := b.editV2(ctx, ch, id, text, m); err != nil {
		return fmt.Errorf("%w (again as a Components V2 message: %w)", first, err)
	}
	return nil
}
