package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/store"
)

// ErrTooLarge: FetchFile refused an upload larger than the core's limit.
var ErrTooLarge = errors.New("web upload is larger than the allowed size")

// Platform limits of the web console: long messages, buttons, and quick
// edits (a browser shows every edit; each one is one small database write).
const (
	maxMessageRunes = 12000
	editInterval    = 250 * time.Millisecond
)

// Limits implements bridges.Platform.
func (c *Console) Limits() bridges.Limits {
	return bridges.Limits{Title: "web console", MaxMessageRunes: maxMessageRunes, CanButtons: true, EditInterval: editInterval,
		FreeTyping: true} // the pages' "working" costs no platform call: no status_delay
}

// Run implements bridges.Platform: the console has nothing to connect; it
// accepts messages from the pages while ctx lasts. It returns nil when ctx
// ends.
func (c *Console) Run(ctx context.Context, h bridges.Handler) error {
	if c.bot == nil {
		return errors.New("web console: the config has no web bot")
	}
	c.mu.Lock()
	c.handler = h
	c.mu.Unlock()
	<-ctx.Done()
	c.mu.Lock()
	c.handler = nil
	c.mu.Unlock()
	return nil
}

// Post implements bridges.Platform: the message is stored (it is the
// conversation's history) and shown on the user's open pages.
func (c *Console) Post(ctx context.Context, key bridges.ConversationKey, m bridges.Message) (bridges.MessageRef, error) {
	buttons, err := encodeButtons(m.Buttons)
	if err != nil {
		return bridges.MessageRef{}, err
	}
	row, err := c.st.AddWebMessage(ctx, store.WebMessage{
		ID: "b" + randomID(10), Key: store.ConversationKey(key), Text: m.Text, CardID: m.CardID, Buttons: buttons, ReplyTo: m.ReplyTo,
	})
	if err != nil {
		return bridges.MessageRef{}, fmt.Errorf("web post in %s: %w", key, err)
	}
	c.hub.publish(key.Channel, event{kind: evMessage, thread: key.Thread, msg: row})
	return bridges.MessageRef{Key: key, ID: row.ID}, nil
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
	c.hub.publish(ref.Key.Channel, event{kind: evMessage, thread: ref.Key.Thread, msg: row})
	return nil
}

// SetTyping implements bridges.Typer: the pages show that a turn runs (and
// its Stop button) until it ends.
func (c *Console) SetTyping(_ context.Context, key bridges.ConversationKey, on bool) error {
	c.mu.Lock()
	if on {
		c.typing[key] = true
	} else {
		delete(c.typing, key)
	}
	c.mu.Unlock()
	c.hub.publish(key.Channel, event{kind: evTyping, thread: key.Thread, on: on})
	return nil
}

// working reports whether a turn runs in key's conversation.
func (c *Console) working(key bridges.ConversationKey) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.typing[key]
}

// FetchFile implements bridges.FileFetcher: an uploaded image, from the
// store, at most max bytes (ErrTooLarge beyond; max <= 0: no cap).
func (c *Console) FetchFile(ctx context.Context, f bridges.File, max int64) ([]byte, error) {
	u, err := c.st.WebUpload(ctx, f.ID)
	if err != nil {
		return nil, fmt.Errorf("web fetch %s: %w", f.ID, err)
	}
	if max > 0 && int64(len(u.Data)) > max {
		return nil, fmt.Errorf("web upload %s (%d bytes, limit %d): %w", f.ID, len(u.Data), max, ErrTooLarge)
	}
	return u.Data, nil
}

// PostEphemeral implements bridges.Ephemeral: a notice on the user's open
// pages of that conversation (of every conversation when key.Thread is
// ""); it is not stored. Pages are per user, so only user sees it.
func (c *Console) PostEphemeral(_ context.Context, key bridges.ConversationKey, user, text string) error {
	if user != key.Channel {
		// A web conversation belongs to one user (its channel); nobody
		// else has a page showing it.
		return fmt.Errorf("web notice for %s in %s: not that user's conversation", user, key)
	}
	c.hub.publish(key.Channel, event{kind: evNotice, thread: key.Thread, text: text})
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
