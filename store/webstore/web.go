package webstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/agentbridge/agentbridge/store/convstore"
	"github.com/agentbridge/agentbridge/store/sqldb"
)

// WebMessage is one message of a web console conversation (table
// web_messages): a user's message (Author = the web user) or a post of the
// bridge (Author ""). Buttons and Files are JSON owned by the web adapter.
type WebMessage struct {
	Seq       int64 // display order, set by the store
	ID        string
	Key       convstore.ConversationKey
	Version   int64 // set by the store; grows with every insert and edit (all conversations)
	Author    string
	Text      string
	CardID    string
	Buttons   []byte
	ReplyTo   string
	Files     []byte
	CreatedAt time.Time
	UpdatedAt time.Time
}

// WebUpload is an image a web user attached (table web_uploads).
type WebUpload struct {
	ID        string
	Key       convstore.ConversationKey
	Name      string
	MimeType  string
	Data      []byte
	CreatedAt time.Time // set by the store
}

const webMessageCols = `seq, id, bot, channel, thread, version, author, text, card_id, buttons, reply_to, files, created_at, updated_at`

func scanWebMessage(r sqldb.Scanner) (WebMessage, error) {
	var m WebMessage
	var buttons, files string
	var created, updated int64
	if err := r.Scan(&m.Seq, &m.ID, &m.Key.Bot, &m.Key.Channel, &m.Key.Thread, &m.Version, &m.Author, &m.Text,
		&m.CardID, &buttons, &m.ReplyTo, &files, &created, &updated); err != nil {
		return WebMessage{}, err
	}
	m.Buttons, m.Files = nilIfEmpty(buttons), nilIfEmpty(files)
	m.CreatedAt, m.UpdatedAt = sqldb.FromMS(created), sqldb.FromMS(updated)
	return m, nil
}

func nilIfEmpty(s string) []byte {
	if s == "" {
		return nil
	}
	return []byte(s)
}

// nextWebVersion is the SQL for the next version number; it runs inside the
// statement's (immediate) transaction, so versions never repeat.
const nextWebVersion = `(SELECT COALESCE(MAX(version), 0) + 1 FROM web_messages)`

// AddWebMessage records a new message and returns it with Seq, Version and
// times set. ID, Key.Bot, Key.Channel and Key.Thread are required; an ID
// already used returns an error wrapping sqldb.ErrDuplicate.
func (s *Store) AddWebMessage(ctx context.Context, m WebMessage) (WebMessage, error) {
	if m.ID == "" || m.Key.Bot == "" || m.Key.Channel == "" || m.Key.Thread == "" {
		return WebMessage{}, fmt.Errorf("add web message: id and full key are required: %w", sqldb.ErrInvalidArgument)
	}
	now := s.db.NowMS()
	err := s.db.WithTx(ctx, func(tx *sql.Tx) error {
		// The conversation's row (web_threads) names its owner: the
		// channel of its first message.
		if _, err := tx.ExecContext(ctx, `INSERT INTO web_threads (bot, thread, owner, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?) ON CONFLICT (bot, thread) DO UPDATE SET updated_at = excluded.updated_at`,
			m.Key.Bot, m.Key.Thread, m.Key.Channel, now, now); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO web_messages
			(id, bot, channel, thread, version, author, text, card_id, buttons, reply_to, files, created_at, updated_at)
			VALUES (?, ?, ?, ?, `+nextWebVersion+`, ?, ?, ?, ?, ?, ?, ?, ?)`,
			m.ID, m.Key.Bot, m.Key.Channel, m.Key.Thread, m.Author, m.Text, m.CardID, string(m.Buttons), m.ReplyTo,
			string(m.Files), now, now)
		return err
	})
	if err != nil {
		return WebMessage{}, fmt.Errorf("add web message %s: %w", m.ID, sqldb.InsertErr(err))
	}
	return s.WebMessage(ctx, m.ID)
}

// EditWebMessage replaces the text, card id and buttons of message id of
// conversation key and gives it a new version. A message that does not
// exist in that conversation returns an error wrapping sqldb.ErrNotFound.
func (s *Store) EditWebMessage(ctx context.Context, key convstore.ConversationKey, id, text, cardID string, buttons []byte) (WebMessage, error) {
	res, err := s.db.Exec(ctx, false, `UPDATE web_messages SET text = ?, card_id = ?, buttons = ?,
		version = `+nextWebVersion+`, updated_at = ?
		WHERE id = ? AND bot = ? AND channel = ? AND thread = ?`,
		text, cardID, string(buttons), s.db.NowMS(), id, key.Bot, key.Channel, key.Thread)
	if err != nil {
		return WebMessage{}, fmt.Errorf("edit web message %s: %w", id, err)
	}
	n, err := sqldb.RowsAffected(res)
	if err != nil {
		return WebMessage{}, fmt.Errorf("edit web message %s: %w", id, err)
	}
	if n == 0 {
		return WebMessage{}, fmt.Errorf("edit web message %s in %s: %w", id, key, sqldb.ErrNotFound)
	}
	return s.WebMessage(ctx, id)
}

// WebMessage returns message id, or an error wrapping sqldb.ErrNotFound.
func (s *Store) WebMessage(ctx context.Context, id string) (WebMessage, error) {
	m, err := scanWebMessage(s.db.QueryRowContext(ctx, `SELECT `+webMessageCols+` FROM web_messages WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return WebMessage{}, fmt.Errorf("web message %s: %w", id, sqldb.ErrNotFound)
	}
	if err != nil {
		return WebMessage{}, fmt.Errorf("get web message %s: %w", id, err)
	}
	return m, nil
}

// WebMessages returns the messages of conversation key changed after
// version afterVersion (0 = all), in display order; with limit > 0 only the
// last limit of them.
func (s *Store) WebMessages(ctx context.Context, key convstore.ConversationKey, afterVersion int64, limit int) ([]WebMessage, error) {
	if limit <= 0 {
		limit = math.MaxInt64
	}
	rows, err := s.db.QueryContext(ctx, `SELECT * FROM (SELECT `+webMessageCols+` FROM web_messages
		WHERE bot = ? AND channel = ? AND thread = ? AND version > ? ORDER BY seq DESC LIMIT ?) AS latest ORDER BY seq`,
		key.Bot, key.Channel, key.Thread, afterVersion, limit)
	if err != nil {
		return nil, fmt.Errorf("web messages of %s: %w", key, err)
	}
	out, err := sqldb.Collect(rows, scanWebMessage)
	if err != nil {
		return nil, fmt.Errorf("web messages of %s: %w", key, err)
	}
	return out, nil
}

// AddWebUpload stores an uploaded file. ID and the key are required.
func (s *Store) AddWebUpload(ctx context.Context, u WebUpload) error {
	if u.ID == "" || u.Key.Bot == "" || u.Key.Channel == "" {
		return fmt.Errorf("add web upload: id and key are required: %w", sqldb.ErrInvalidArgument)
	}
	_, err := s.db.Exec(ctx, false, `INSERT INTO web_uploads
		(id, bot, channel, thread, name, mime_type, size, data, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		u.ID, u.Key.Bot, u.Key.Channel, u.Key.Thread, u.Name, u.MimeType, len(u.Data), u.Data, s.db.NowMS())
	if err != nil {
		return fmt.Errorf("add web upload %s: %w", u.ID, sqldb.InsertErr(err))
	}
	return nil
}

// WebUpload returns upload id, or an error wrapping sqldb.ErrNotFound.
func (s *Store) WebUpload(ctx context.Context, id string) (WebUpload, error) {
	var u WebUpload
	var created int64
	err := s.db.QueryRowContext(ctx, `SELECT id, bot, channel, thread, name, mime_type, data, created_at
		FROM web_uploads WHERE id = ?`, id).
		Scan(&u.ID, &u.Key.Bot, &u.Key.Channel, &u.Key.Thread, &u.Name, &u.MimeType, &u.Data, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return WebUpload{}, fmt.Errorf("web upload %s: %w", id, sqldb.ErrNotFound)
	}
	if err != nil {
		return WebUpload{}, fmt.Errorf("get web upload %s: %w", id, err)
	}
	u.CreatedAt = sqldb.FromMS(created)
	return u, nil
}

// Prune deletes web messages last updated, and uploads and tool calls
// made, before cut (Unix ms), at most batch rows per transaction, then the
// conversations left without messages, with their shares. It returns how
// many rows went, also on error. Package store's Prune calls it.
func Prune(ctx context.Context, db *sqldb.DB, cut int64, batch int) (int64, error) {
	msgs, err := db.DeleteBatched(ctx, "web_messages", "seq", `updated_at < ?`, []any{cut}, batch)
	if err != nil {
		return msgs, err
	}
	ups, err := db.DeleteBatched(ctx, "web_uploads", "id", `created_at < ?`, []any{cut}, batch)
	if err != nil {
		return msgs + ups, err
	}
	tools, err := db.DeleteBatched(ctx, "web_tools", db.Dialect().RowID(), `updated_at < ?`, []any{cut}, batch)
	ups += tools
	if err != nil {
		return msgs + ups, err
	}
	// A conversation without messages left is forgotten with its shares.
	res, err := db.Exec(ctx, false, `DELETE FROM web_threads WHERE updated_at < ? AND NOT EXISTS
		(SELECT 1 FROM web_messages m WHERE m.bot = web_threads.bot AND m.thread = web_threads.thread)`, cut)
	if err != nil {
		return msgs + ups, fmt.Errorf("prune web threads: %w", err)
	}
	threads, _ := res.RowsAffected()
	if _, err := db.Exec(ctx, false, `DELETE FROM web_shares WHERE NOT EXISTS
		(SELECT 1 FROM web_threads t WHERE t.bot = web_shares.bot AND t.thread = web_shares.thread)`); err != nil {
		return msgs + ups + threads, fmt.Errorf("prune web shares: %w", err)
	}
	return msgs + ups + threads, err
}
