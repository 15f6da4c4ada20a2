package webstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/agentbridge/agentbridge/store/convstore"
	"github.com/agentbridge/agentbridge/store/sqldb"
)

// Roles of a teammate in a shared web conversation (web_shares.role).
const (
	WebViewer      = "viewer"      // reads it live; decides cards only as the bot's access allows
	WebParticipant = "participant" // also writes to the agent
	WebOwner       = "owner"       // WebThread.Role of the person who started it (not stored as a share)
)

// WebThread summarises one web conversation for a list (table
// web_threads with its messages).
type WebThread struct {
	Thread string
	Owner  string // the web user who started it (its messages' channel)
	// Title is what the owner named it, or else the first message a person
	// wrote in it ("" when none).
	Title     string
	Named     bool   // Title was set by a rename
	Role      string // the viewer's role: WebOwner, WebParticipant or WebViewer
	Archived  bool
	Messages  int64
	UpdatedAt time.Time
}

// WebThreadQuery selects conversations for WebThreads.
type WebThreadQuery struct {
	Archived bool   // the archived ones instead of the others
	Search   string // words that must all occur in the title or in one message; "" = all
	Limit    int    // > 0
}

// WebShare is one teammate a web conversation is shared with.
type WebShare struct {
	Member string
	Role   string // WebViewer or WebParticipant
}

// webThreadCols reads a WebThread from web_threads t for the viewer bound
// as the first argument.
const webThreadCols = `t.thread, t.owner,
	COALESCE(NULLIF(t.title, ''), (SELECT f.text FROM web_messages f WHERE f.bot = t.bot AND f.thread = t.thread
		AND f.channel = t.owner AND f.author <> '' ORDER BY f.seq LIMIT 1), ''),
	t.title <> '',
	CASE WHEN t.owner = ?1 THEN 'owner' ELSE COALESCE((SELECT s.role FROM web_shares s
		WHERE s.bot = t.bot AND s.thread = t.thread AND s.member = ?1), '') END,
	t.archived,
	(SELECT COUNT(*) FROM web_messages m WHERE m.bot = t.bot AND m.thread = t.thread AND m.channel = t.owner),
	t.updated_at`

func scanWebThread(r sqldb.Scanner) (WebThread, error) {
	var t WebThread
	var updated int64
	if err := r.Scan(&t.Thread, &t.Owner, &t.Title, &t.Named, &t.Role, &t.Archived, &t.Messages, &updated); err != nil {
		return WebThread{}, err
	}
	t.UpdatedAt = sqldb.FromMS(updated)
	return t, nil
}

// WebThreads lists the conversations of bot that user owns or that are
// shared with them, most recently updated first, deleted ones never.
func (s *Store) WebThreads(ctx context.Context, bot, user string, q WebThreadQuery) ([]WebThread, error) {
	if q.Limit <= 0 {
		return nil, fmt.Errorf("web threads: limit %d: %w", q.Limit, sqldb.ErrInvalidArgument)
	}
	where := `t.bot = ?2 AND t.deleted = 0 AND t.archived = ?3 AND (t.owner = ?1 OR EXISTS (SELECT 1 FROM web_shares s
		WHERE s.bot = t.bot AND s.thread = t.thread AND s.member = ?1))`
	args := []any{user, bot, sqldb.BoolInt(q.Archived), q.Limit}
	if words := searchWords(q.Search); len(words) > 0 {
		// Every word in the title, or every word in one message.
		match, arg := s.db.Dialect().WebMessageSearch("?5", words)
		args = append(args, arg)
		where += ` AND (` + titleLike(words, &args) + ` OR EXISTS (SELECT 1 FROM web_messages m
			WHERE m.bot = t.bot AND m.thread = t.thread AND m.channel = t.owner AND ` + match + `))`
	}
	rows, err := s.db.QueryContext(ctx, `SELECT `+webThreadCols+` FROM web_threads t WHERE `+where+`
		AND EXISTS (SELECT 1 FROM web_messages e WHERE e.bot = t.bot AND e.thread = t.thread)
		ORDER BY t.updated_at DESC, t.thread LIMIT ?4`, args...)
	if err != nil {
		return nil, fmt.Errorf("web threads of %s/%s: %w", bot, user, err)
	}
	out, err := sqldb.Collect(rows, scanWebThread)
	if err != nil {
		return nil, fmt.Errorf("web threads of %s/%s: %w", bot, user, err)
	}
	return out, nil
}

// WebMessagesMatching returns the texts of the newest messages of
// conversation key (at most limit, newest first) that hold every word of
// search as the start of a word: the index WebThreads searches, so over
// all of the conversation's messages however many it has, the work bounded
// by the index and the limit. None when search has no words.
func (s *Store) WebMessagesMatching(ctx context.Context, key convstore.ConversationKey, search string, limit int) ([]string, error) {
	if limit <= 0 {
		return nil, fmt.Errorf("web messages matching: limit %d: %w", limit, sqldb.ErrInvalidArgument)
	}
	words := searchWords(search)
	if len(words) == 0 {
		return nil, nil
	}
	match, arg := s.db.Dialect().WebMessageSearch("?5", words)
	rows, err := s.db.QueryContext(ctx, `SELECT m.text FROM web_messages m
		WHERE m.bot = ?1 AND m.channel = ?2 AND m.thread = ?3 AND `+match+` ORDER BY m.seq DESC LIMIT ?4`,
		key.Bot, key.Channel, key.Thread, limit, arg)
	if err != nil {
		return nil, fmt.Errorf("web messages of %s matching: %w", key, err)
	}
	out, err := sqldb.Collect(rows, func(r sqldb.Scanner) (string, error) {
		var text string
		return text, r.Scan(&text)
	})
	if err != nil {
		return nil, fmt.Errorf("web messages of %s matching: %w", key, err)
	}
	return out, nil
}

// searchWords splits search into words of letters and digits, at most 8.
func searchWords(search string) []string {
	words := strings.FieldsFunc(search, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	if len(words) > 8 {
		words = words[:8]
	}
	return words
}

// titleLike adds to args a LIKE pattern per search word (starting at ?6)
// and returns the condition that the title holds them all, case-folded
// (LOWER on both sides: ASCII letters in SQLite, as its LIKE, and every
// letter in PostgreSQL, whose LIKE is case-sensitive).
func titleLike(words []string, args *[]any) string {
	var conds []string
	for _, w := range words {
		*args = append(*args, "%"+w+"%") // letters and digits only: nothing to escape
		conds = append(conds, fmt.Sprintf("LOWER(t.title) LIKE LOWER(?%d)", len(*args)))
	}
	return "(" + strings.Join(conds, " AND ") + ")"
}

// WebThreadFor returns conversation thread of bot as user sees it (Role ""
// when user neither owns it nor is a member), or an error wrapping
// sqldb.ErrNotFound when there is no such conversation or it was deleted.
func (s *Store) WebThreadFor(ctx context.Context, bot, thread, user string) (WebThread, error) {
	t, err := scanWebThread(s.db.QueryRowContext(ctx, `SELECT `+webThreadCols+` FROM web_threads t
		WHERE t.bot = ?2 AND t.thread = ?3 AND t.deleted = 0`, user, bot, thread))
	if errors.Is(err, sql.ErrNoRows) {
		return WebThread{}, fmt.Errorf("web thread %s/%s: %w", bot, thread, sqldb.ErrNotFound)
	}
	if err != nil {
		return WebThread{}, fmt.Errorf("web thread %s/%s: %w", bot, thread, err)
	}
	return t, nil
}

// WebThreadDeleted reports whether conversation thread of bot was deleted.
func (s *Store) WebThreadDeleted(ctx context.Context, bot, thread string) (bool, error) {
	var deleted bool
	err := s.db.QueryRowContext(ctx, `SELECT deleted FROM web_threads WHERE bot = ? AND thread = ?`, bot, thread).Scan(&deleted)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("web thread %s/%s: %w", bot, thread, err)
	}
	return deleted, nil
}

// RenameWebThread sets the title of conversation thread of bot ("" goes
// back to the first message).
func (s *Store) RenameWebThread(ctx context.Context, bot, thread, title string) error {
	return s.updateWebThread(ctx, "rename", `title = ?`, title, bot, thread)
}

// ArchiveWebThread archives (or, with archived false, restores)
// conversation thread of bot.
func (s *Store) ArchiveWebThread(ctx context.Context, bot, thread string, archived bool) error {
	return s.updateWebThread(ctx, "archive", `archived = ?`, sqldb.BoolInt(archived), bot, thread)
}

func (s *Store) updateWebThread(ctx context.Context, what, set string, value any, bot, thread string) error {
	res, err := s.db.Exec(ctx, false, `UPDATE web_threads SET `+set+`, updated_at = ? WHERE bot = ? AND thread = ? AND deleted = 0`,
		value, s.db.NowMS(), bot, thread)
	if err != nil {
		return fmt.Errorf("%s web thread %s/%s: %w", what, bot, thread, err)
	}
	if err := sqldb.AffectedOne(res); err != nil {
		return fmt.Errorf("%s web thread %s/%s: %w", what, bot, thread, err)
	}
	return nil
}

// DeleteWebThread deletes conversation thread of bot: its messages,
// uploads and shares go at once, and a tombstone keeps its id from being
// used again. Messages posted into it later are stored but never listed
// (and pruned after retention).
func (s *Store) DeleteWebThread(ctx context.Context, bot, thread string) error {
	err := s.db.WithTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE web_threads SET deleted = 1, title = '', updated_at = ?
			WHERE bot = ? AND thread = ? AND deleted = 0`, s.db.NowMS(), bot, thread)
		if err != nil {
			return err
		}
		if err := sqldb.AffectedOne(res); err != nil {
			return err
		}
		for _, table := range []string{"web_messages", "web_uploads", "web_shares", "web_tools"} {
			if _, err := tx.ExecContext(ctx, `DELETE FROM `+table+` WHERE bot = ? AND thread = ?`, bot, thread); err != nil {
				return fmt.Errorf("%s: %w", table, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("delete web thread %s/%s: %w", bot, thread, err)
	}
	return nil
}

// ShareWebThread gives member role (WebViewer or WebParticipant) in
// conversation thread of bot, replacing an earlier role; role "" ends the
// share.
func (s *Store) ShareWebThread(ctx context.Context, bot, thread, member, role string) error {
	var err error
	switch role {
	case "":
		_, err = s.db.Exec(ctx, false, `DELETE FROM web_shares WHERE bot = ? AND thread = ? AND member = ?`, bot, thread, member)
	case WebViewer, WebParticipant:
		_, err = s.db.Exec(ctx, false, `INSERT INTO web_shares (bot, thread, member, role, created_at)
			SELECT ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM web_threads WHERE bot = ? AND thread = ? AND deleted = 0 AND owner <> ?)
			ON CONFLICT (bot, thread, member) DO UPDATE SET role = excluded.role`,
			bot, thread, member, role, s.db.NowMS(), bot, thread, member)
	default:
		return fmt.Errorf("share web thread %s/%s: role %q: %w", bot, thread, role, sqldb.ErrInvalidArgument)
	}
	if err != nil {
		return fmt.Errorf("share web thread %s/%s with %s: %w", bot, thread, member, err)
	}
	return nil
}

// WebThreadShares lists the teammates conversation thread of bot is
// shared with, by name.
func (s *Store) WebThreadShares(ctx context.Context, bot, thread string) ([]WebShare, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT member, role FROM web_shares WHERE bot = ? AND thread = ? ORDER BY member`, bot, thread)
	if err != nil {
		return nil, fmt.Errorf("shares of web thread %s/%s: %w", bot, thread, err)
	}
	out, err := sqldb.Collect(rows, func(r sqldb.Scanner) (WebShare, error) {
		var sh WebShare
		return sh, r.Scan(&sh.Member, &sh.Role)
	})
	if err != nil {
		return nil, fmt.Errorf("shares of web thread %s/%s: %w", bot, thread, err)
	}
	return out, nil
}
