package web

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/adapters/web/feed"
	"github.com/agentbridge/agentbridge/bridges/core/access"
	"github.com/agentbridge/agentbridge/store"
)

// Post implements bridges.Platform: the message is stored (it is the
// conversation's history) and shown on the user's open pages; it ends a
// start that no turn ended (the bridge answered).
//
// With m.Idem (not a live message) the message's id is derived from the
// conversation and Idem (idemID), so that a retry after a lost answer, or
// a card looked for by its Idem, finds the message stored the first time:
// Post then returns it as it is and shows nothing new.
func (c *Console) Post(ctx context.Context, key bridges.ConversationKey, m bridges.Message) (bridges.MessageRef, error) {
	buttons, err := encodeButtons(m.Buttons)
	if err != nil {
		return bridges.MessageRef{}, err
	}
	id := "b" + randomID(10)
	if m.Idem != "" && !m.Live {
		id = idemID(key, m.Idem)
	}
	row, err := c.st.AddWebMessage(ctx, store.WebMessage{
		ID: id, Key: store.ConversationKey(key), Text: m.Text, CardID: m.CardID, Buttons: buttons, ReplyTo: m.ReplyTo,
	})
	if errors.Is(err, store.ErrDuplicate) && m.Idem != "" && !m.Live {
		earlier, gerr := c.st.WebMessage(ctx, id)
		if gerr == nil && earlier.Key == store.ConversationKey(key) {
			return bridges.MessageRef{Key: key, ID: earlier.ID}, nil
		}
	}
	if err != nil {
		return bridges.MessageRef{}, fmt.Errorf("web post in %s: %w", key, err)
	}
	c.hub.Publish(ctx, feed.ThreadTopic(key.Thread), feed.Event{Kind: feed.Message, Thread: key.Thread, Msg: row})
	c.listChanged(ctx, key)
	c.endStart(ctx, key) // the bridge answered: what comes next, it says
	return bridges.MessageRef{Key: key, ID: row.ID}, nil
}

// idemID is the id of the message posted under idem in conversation key:
// "b" and 20 hex digits of SHA-256 of both, like a random id's length.
func idemID(key bridges.ConversationKey, idem string) string {
	sum := sha256.Sum256([]byte(key.Bot + "\x00" + key.Channel + "\x00" + key.Thread + "\x00" + idem))
	return "b" + hex.EncodeToString(sum[:10])
}

// Edit implements bridges.Editor: text and buttons are replaced in the
// store and on the open pages.
func (c *Console) Edit(ctx context.Context, ref bridges.MessageRef, m bridges.Message) error {
	buttons, err := encodeButtons(m.Buttons)
	if err != nil {
		return err
	}
	row, err := c.st.EditWebMessage(ctx, store.ConversationKey(ref.Key), ref.ID, m.Text, m.CardID, buttons)
	if err != nil {
		return fmt.Errorf("web edit: %w", err)
	}
	c.hub.Publish(ctx, feed.ThreadTopic(ref.Key.Thread), feed.Event{Kind: feed.Message, Thread: ref.Key.Thread, Msg: row})
	return nil
}

// PostEphemeral implements bridges.Ephemeral: a notice on user's open
// pages of that conversation (of every page of theirs when key.Thread is
// ""); it is not stored, and only user sees it. user must be the
// conversation's owner (its channel) or a teammate it is shared with.
func (c *Console) PostEphemeral(ctx context.Context, key bridges.ConversationKey, user, text string) error {
	ev := feed.Event{Kind: feed.Notice, Thread: key.Thread, User: user, Text: text}
	if key.Thread == "" {
		if user != key.Channel {
			return fmt.Errorf("web notice for %s in %s: not that user's channel", user, key)
		}
		c.hub.Publish(ctx, feed.UserTopic(user), ev)
		return nil
	}
	if !c.access.May(ctx, access.Person{Via: access.ViaWeb, Name: user}, access.Conv{Key: key}, access.See) {
		return fmt.Errorf("web notice for %s in %s: not a conversation they can see", user, key)
	}
	c.hub.Publish(ctx, feed.ThreadTopic(key.Thread), ev)
	c.endStart(ctx, key)
	return nil
}

// encodeButtons stores a card's buttons as JSON (nil without buttons).
func encodeButtons(bs []bridges.Button) ([]byte, error) {
	if len(bs) == 0 {
		return nil, nil
	}
	b, err := json.Marshal(bs)
	if err != nil {
		return nil, fmt.Errorf("encode buttons: %w", err)
	}
	return b, nil
}

// decodeButtons reads stored buttons back (nil when none or unreadable).
func decodeButtons(b []byte) []bridges.Button {
	var bs []bridges.Button
	if len(b) > 0 && json.Unmarshal(b, &bs) != nil {
		return nil
	}
	return bs
}

// notice posts a message of the console itself into the conversation.
func (c *Console) notice(ctx context.Context, key bridges.ConversationKey, text string) {
	if _, err := c.Post(ctx, key, bridges.Message{Text: text}); err != nil {
		c.log.Warn("post web notice", "key", key, "err", err)
	}
}
