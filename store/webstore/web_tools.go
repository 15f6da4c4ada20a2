package webstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/agentbridge/agentbridge/store/convstore"
	"github.com/agentbridge/agentbridge/store/sqldb"
)

// WebTool is one tool call of a web conversation, kept in full (table
// web_tools) for its expandable tool line.
type WebTool struct {
	Key     convstore.ConversationKey
	ID      string
	Name    string
	Input   string // JSON
	Output  string
	IsError bool
	Done    bool
}

// maxWebToolText caps what is kept of a tool call's input and of its
// output (bytes); the page says when it was cut.
const maxWebToolText = 256 << 10

// RecordWebTool records a tool call (Done false: name and input) or its
// result (Done true: output and IsError, for a call recorded before; a
// result without its call is ignored). Text beyond 256 KiB is cut.
func (s *Store) RecordWebTool(ctx context.Context, t WebTool) error {
	cut := func(v string) string {
		if len(v) > maxWebToolText {
			return v[:maxWebToolText] + "\n… (cut at 256 KiB)"
		}
		return v
	}
	var err error
	if t.Done {
		_, err = s.db.Exec(ctx, false, `UPDATE web_tools SET output = ?, is_error = ?, done = 1, updated_at = ?
			WHERE bot = ? AND thread = ? AND id = ? AND channel = ?`,
			cut(t.Output), sqldb.BoolInt(t.IsError), s.db.NowMS(), t.Key.Bot, t.Key.Thread, t.ID, t.Key.Channel)
	} else {
		_, err = s.db.Exec(ctx, false, `INSERT INTO web_tools (bot, channel, thread, id, name, input, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (bot, thread, id) DO NOTHING`,
			t.Key.Bot, t.Key.Channel, t.Key.Thread, t.ID, t.Name, cut(t.Input), s.db.NowMS())
	}
	if err != nil {
		return fmt.Errorf("record web tool call %s: %w", t.ID, err)
	}
	return nil
}

// WebTool returns tool call id of conversation key, or an error wrapping
// sqldb.ErrNotFound.
func (s *Store) WebTool(ctx context.Context, key convstore.ConversationKey, id string) (WebTool, error) {
	t := WebTool{Key: key, ID: id}
	err := s.db.QueryRowContext(ctx, `SELECT name, input, output, is_error, done FROM web_tools
		WHERE bot = ? AND thread = ? AND id = ? AND channel = ?`, key.Bot, key.Thread, id, key.Channel).
		Scan(&t.Name, &t.Input, &t.Output, &t.IsError, &t.Done)
	if errors.Is(err, sql.ErrNoRows) {
		return WebTool{}, fmt.Errorf("web tool call %s: %w", id, sqldb.ErrNotFound)
	}
	if err != nil {
		return WebTool{}, fmt.Errorf("web tool call %s: %w", id, err)
	}
	return t, nil
}
