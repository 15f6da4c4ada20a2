package convstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/agentbridge/agentbridge/store/sqldb"
)

// MaxSummaryBytes caps a conversation's stored summary (its first prompt).
const MaxSummaryBytes = 200

// SessionInfo is one conversation as !sessions lists it: the conversation,
// its current session's summary, and what that session cost so far.
type SessionInfo struct {
	Conversation
	Summary string  // the session's first prompt, one line; empty = the session has had no message yet
	CostUSD float64 // usage rows of the session (any conversation that held it)
	Turns   int64
}

// ListSessions returns the conversations of bot in channel whose current
// session has had a message (a summary), most recently active first, at
// most limit (limit ≤ 0 means 20).
func (s *Store) ListSessions(ctx context.Context, bot, channel string, limit int) ([]SessionInfo, error) {
	if limit <= 0 {
		limit = 20
	}
	rows, err := s.db.QueryContext(ctx, `SELECT `+sqldb.Prefixed("c.", conversationCols)+`, c.summary,
		COALESCE((SELECT SUM(u.cost_usd) FROM usage u WHERE u.session_id = c.session_id), 0),
		(SELECT COUNT(*) FROM usage u WHERE u.session_id = c.session_id)
		FROM conversations c
		WHERE c.bot = ? AND c.channel = ? AND c.summary <> '' AND c.session_id <> ''
		ORDER BY c.last_active_at DESC, c.created_at DESC, c.id LIMIT ?`, bot, channel, limit)
	if err != nil {
		return nil, fmt.Errorf("list sessions of %s in %s: %w", bot, channel, err)
	}
	out, err := sqldb.Collect(rows, scanSessionInfo)
	if err != nil {
		return nil, fmt.Errorf("list sessions of %s in %s: %w", bot, channel, err)
	}
	return out, nil
}

// SessionsByPrefix returns the conversations of bot whose current session
// id starts with prefix (case-insensitive; at least 4 characters), with
// their summaries; more than one means the prefix is ambiguous.
func (s *Store) SessionsByPrefix(ctx context.Context, bot, prefix string) ([]SessionInfo, error) {
	prefix = strings.ToLower(strings.TrimSpace(prefix))
	if len(prefix) < 4 || strings.ContainsAny(prefix, `%_\`) {
		return nil, fmt.Errorf("sessions by prefix %q: want at least 4 characters of a session id: %w", prefix, sqldb.ErrInvalidArgument)
	}
	rows, err := s.db.QueryContext(ctx, `SELECT `+sqldb.Prefixed("c.", conversationCols)+`, c.summary,
		COALESCE((SELECT SUM(u.cost_usd) FROM usage u WHERE u.session_id = c.session_id), 0),
		(SELECT COUNT(*) FROM usage u WHERE u.session_id = c.session_id)
		FROM conversations c
		WHERE c.bot = ? AND LOWER(c.session_id) LIKE ? ORDER BY c.last_active_at DESC LIMIT 10`, bot, prefix+"%")
	if err != nil {
		return nil, fmt.Errorf("sessions of %s by prefix %q: %w", bot, prefix, err)
	}
	out, err := sqldb.Collect(rows, scanSessionInfo)
	if err != nil {
		return nil, fmt.Errorf("sessions of %s by prefix %q: %w", bot, prefix, err)
	}
	return out, nil
}

func scanSessionInfo(r sqldb.Scanner) (SessionInfo, error) {
	var si SessionInfo
	var created, updated, active int64
	c := &si.Conversation
	err := r.Scan(&c.ID, &c.Key.Bot, &c.Key.Channel, &c.Key.Thread, &c.Agent, &c.SessionID, &c.OwnerUserID,
		&c.Model, &c.PermissionMode, &c.AgentOverride, &created, &updated, &active, &si.Summary, &si.CostUSD, &si.Turns)
	if err != nil {
		return SessionInfo{}, err
	}
	c.CreatedAt, c.UpdatedAt, c.LastActiveAt = sqldb.FromMS(created), sqldb.FromMS(updated), sqldb.FromMS(active)
	return si, nil
}

// NoteActivity records that a message of conversation convID went to its
// agent now (last_active_at), and keeps prompt, cut to one line, as the
// session's summary unless it already has one.
func (s *Store) NoteActivity(ctx context.Context, convID, prompt string) error {
	res, err := s.db.Exec(ctx, false, `UPDATE conversations SET last_active_at = ?,
		summary = CASE WHEN summary = '' THEN ? ELSE summary END WHERE id = ?`,
		s.db.NowMS(), Summarize(prompt), convID)
	if err != nil {
		return fmt.Errorf("note activity of conversation %s: %w", convID, err)
	}
	if err := sqldb.AffectedOne(res); err != nil {
		return fmt.Errorf("note activity of conversation %s: %w", convID, err)
	}
	return nil
}

// Summarize cuts text to the one-line summary NoteActivity stores: its
// first non-blank line, whitespace collapsed, at most MaxSummaryBytes
// (on a rune boundary, with "…" when cut).
func Summarize(text string) string {
	line := ""
	for l := range strings.SplitSeq(text, "\n") {
		if l = strings.Join(strings.Fields(l), " "); l != "" {
			line = l
			break
		}
	}
	if len(line) <= MaxSummaryBytes {
		return line
	}
	cut := MaxSummaryBytes - len("…")
	for cut > 0 && !utf8.RuneStart(line[cut]) {
		cut--
	}
	return line[:cut] + "…"
}

// ResetSession gives conversation convID a fresh session id (!new): the
// summary is cleared with it.
func (s *Store) ResetSession(ctx context.Context, convID, sessionID string) error {
	res, err := s.db.Exec(ctx, false, `UPDATE conversations SET session_id = ?, summary = '', updated_at = ? WHERE id = ?`,
		sessionID, s.db.NowMS(), convID)
	if err != nil {
		return fmt.Errorf("reset session of conversation %s: %w", convID, err)
	}
	if err := sqldb.AffectedOne(res); err != nil {
		return fmt.Errorf("reset session of conversation %s: %w", convID, err)
	}
	return nil
}

// MoveSession hands session sessionID, with its summary, from conversation
// from to conversation to (!resume), in one transaction: from gets the
// fresh session id fresh and no summary. It fails with ErrSessionMoved,
// changing nothing, when from no longer has sessionID.
func (s *Store) MoveSession(ctx context.Context, from, to, sessionID, fresh string) error {
	if from == to || sessionID == "" || fresh == "" || fresh == sessionID {
		return fmt.Errorf("move session %s: %w", sessionID, sqldb.ErrInvalidArgument)
	}
	return s.db.WithTx(ctx, func(tx *sql.Tx) error {
		var cur, summary string
		err := tx.QueryRowContext(ctx, `SELECT session_id, summary FROM conversations WHERE id = ?`, from).Scan(&cur, &summary)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return fmt.Errorf("move session %s from conversation %s: %w", sessionID, from, sqldb.ErrNotFound)
		case err != nil:
			return fmt.Errorf("move session %s from conversation %s: %w", sessionID, from, err)
		case cur != sessionID:
			return fmt.Errorf("move session %s from conversation %s: %w", sessionID, from, ErrSessionMoved)
		}
		now := s.db.NowMS()
		if _, err := tx.ExecContext(ctx, `UPDATE conversations SET session_id = ?, summary = '', updated_at = ? WHERE id = ?`,
			fresh, now, from); err != nil {
			return fmt.Errorf("move session %s from conversation %s: %w", sessionID, from, err)
		}
		res, err := tx.ExecContext(ctx, `UPDATE conversations SET session_id = ?, summary = ?, updated_at = ?, last_active_at = ? WHERE id = ?`,
			sessionID, summary, now, now, to)
		if err != nil {
			return fmt.Errorf("move session %s to conversation %s: %w", sessionID, to, err)
		}
		if err := sqldb.AffectedOne(res); err != nil {
			return fmt.Errorf("move session %s to conversation %s: %w", sessionID, to, err)
		}
		return nil
	})
}

// SessionSummary returns the summary of conversation convID's current
// session (empty when it has had no message).
func (s *Store) SessionSummary(ctx context.Context, convID string) (string, error) {
	var summary string
	err := s.db.QueryRowContext(ctx, `SELECT summary FROM conversations WHERE id = ?`, convID).Scan(&summary)
	if errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("summary of conversation %s: %w", convID, sqldb.ErrNotFound)
	}
	if err != nil {
		return "", fmt.Errorf("summary of conversation %s: %w", convID, err)
	}
	return summary, nil
}
