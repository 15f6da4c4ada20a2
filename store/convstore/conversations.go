package convstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/agentbridge/agentbridge/store/sqldb"
	"github.com/google/uuid"
)

// ConversationKey identifies a conversation on a platform: the bot, the
// channel (or chat) and the thread (” where the platform has none).
type ConversationKey struct {
	Bot, Channel, Thread string
}

// LogValue groups the key's parts in log records.
func (k ConversationKey) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("bot", k.Bot),
		slog.String("channel", k.Channel),
		slog.String("thread", k.Thread),
	)
}

func (k ConversationKey) String() string {
	return k.Bot + "/" + k.Channel + "/" + k.Thread
}

// Conversation is one chat conversation bound to one Claude Code session.
type Conversation struct {
	ID             string // uuid chosen by the store
	Key            ConversationKey
	Agent          string // agent profile name
	SessionID      string // Claude Code session id; '' until set
	OwnerUserID    string // who started the conversation
	Model          string // model override; '' = profile default
	PermissionMode string // permission-mode override; '' = profile default
	AgentOverride  string // profile !agent moved it to; '' = Agent
	CreatedAt      time.Time
	UpdatedAt      time.Time // last change of a setting
	LastActiveAt   time.Time // last TouchConversation (or creation)
}

const conversationCols = `id, bot, channel, thread, agent, session_id, owner_user_id, model, permission_mode,
	agent_override, created_at, updated_at, last_active_at`

func scanConversation(r sqldb.Scanner) (Conversation, error) {
	var c Conversation
	var created, updated, active int64
	err := r.Scan(&c.ID, &c.Key.Bot, &c.Key.Channel, &c.Key.Thread, &c.Agent, &c.SessionID, &c.OwnerUserID,
		&c.Model, &c.PermissionMode, &c.AgentOverride, &created, &updated, &active)
	if err != nil {
		return Conversation{}, err
	}
	c.CreatedAt, c.UpdatedAt, c.LastActiveAt = sqldb.FromMS(created), sqldb.FromMS(updated), sqldb.FromMS(active)
	return c, nil
}

// GetOrCreateConversation returns the conversation for key, creating it with
// a new id, the agent profile name and owner if it does not exist. created
// reports whether this call created it; concurrent callers with the same key
// get the same conversation and exactly one sees created == true. An existing
// conversation is returned unchanged (agent and owner are not updated).
func (s *Store) GetOrCreateConversation(ctx context.Context, key ConversationKey, agent, owner string) (conv Conversation, created bool, err error) {
	if key.Bot == "" || key.Channel == "" || agent == "" {
		return Conversation{}, false, fmt.Errorf("get or create conversation %s: bot, channel and agent are required: %w", key, sqldb.ErrInvalidArgument)
	}
	conv, err = s.GetConversation(ctx, key)
	if err == nil {
		return conv, false, nil
	}
	if !errors.Is(err, sqldb.ErrNotFound) {
		return Conversation{}, false, err
	}
	now := s.db.NowMS()
	res, err := s.db.Exec(ctx, true, `INSERT INTO conversations
		(id, bot, channel, thread, agent, owner_user_id, created_at, updated_at, last_active_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (bot, channel, thread) DO NOTHING`,
		uuid.NewString(), key.Bot, key.Channel, key.Thread, agent, owner, now, now, now)
	if err != nil {
		return Conversation{}, false, fmt.Errorf("create conversation %s: %w", key, err)
	}
	n, err := sqldb.RowsAffected(res)
	if err != nil {
		return Conversation{}, false, fmt.Errorf("create conversation %s: %w", key, err)
	}
	conv, err = s.GetConversation(ctx, key)
	if err != nil {
		return Conversation{}, false, err
	}
	if n == 1 {
		s.db.Logger().DebugContext(ctx, "conversation created", "conversation", conv.ID, "key", key, "agent", agent)
	}
	return conv, n == 1, nil
}

// GetConversation returns the conversation for key, or an error wrapping
// sqldb.ErrNotFound.
func (s *Store) GetConversation(ctx context.Context, key ConversationKey) (Conversation, error) {
	row := s.db.QueryRowContext(ctx, `SELECT `+conversationCols+` FROM conversations
		WHERE bot = ? AND channel = ? AND thread = ?`, key.Bot, key.Channel, key.Thread)
	c, err := scanConversation(row)
	if errors.Is(err, sql.ErrNoRows) {
		return Conversation{}, fmt.Errorf("conversation %s: %w", key, sqldb.ErrNotFound)
	}
	if err != nil {
		return Conversation{}, fmt.Errorf("get conversation %s: %w", key, err)
	}
	return c, nil
}

// ConversationByID returns the conversation with id, or an error wrapping
// sqldb.ErrNotFound.
func (s *Store) ConversationByID(ctx context.Context, id string) (Conversation, error) {
	row := s.db.QueryRowContext(ctx, `SELECT `+conversationCols+` FROM conversations WHERE id = ?`, id)
	c, err := scanConversation(row)
	if errors.Is(err, sql.ErrNoRows) {
		return Conversation{}, fmt.Errorf("conversation %s: %w", id, sqldb.ErrNotFound)
	}
	if err != nil {
		return Conversation{}, fmt.Errorf("get conversation %s: %w", id, err)
	}
	return c, nil
}

// ListConversations returns every conversation, most recently active first.
func (s *Store) ListConversations(ctx context.Context) ([]Conversation, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+conversationCols+` FROM conversations
		ORDER BY last_active_at DESC, created_at DESC, id`)
	if err != nil {
		return nil, fmt.Errorf("list conversations: %w", err)
	}
	out, err := sqldb.Collect(rows, scanConversation)
	if err != nil {
		return nil, fmt.Errorf("list conversations: %w", err)
	}
	return out, nil
}

// SetSessionID stores the Claude Code session id of conversation convID
// (” clears it, e.g. for !new before a fresh id is chosen).
func (s *Store) SetSessionID(ctx context.Context, convID, sessionID string) error {
	return s.setConversationField(ctx, convID, "session_id", sessionID)
}

// SetModel stores the model override of conversation convID (” clears it).
func (s *Store) SetModel(ctx context.Context, convID, model string) error {
	return s.setConversationField(ctx, convID, "model", model)
}

// SetPermissionMode stores the permission-mode override of conversation
// convID (” clears it).
func (s *Store) SetPermissionMode(ctx context.Context, convID, mode string) error {
	return s.setConversationField(ctx, convID, "permission_mode", mode)
}

// SwitchAgent moves conversation convID to agent profile agent (” = its
// own profile, Agent) with the fresh session id sessionID, in one
// transaction: the model and permission-mode overrides and the "Always
// allow" grants, given for the profile it leaves, end with it (the grants
// removed by by, kept for the audit), and the session's summary is
// cleared. It returns how many grants it removed. !agent uses it.
func (s *Store) SwitchAgent(ctx context.Context, convID, agent, sessionID, by string) (revoked int, err error) {
	if sessionID == "" {
		return 0, fmt.Errorf("switch agent of conversation %s: a session id is required: %w", convID, sqldb.ErrInvalidArgument)
	}
	err = s.db.WithTx(ctx, func(tx *sql.Tx) error {
		now := s.db.NowMS()
		res, err := tx.ExecContext(ctx, `UPDATE conversations SET agent_override = ?, session_id = ?, summary = '',
			model = '', permission_mode = '', updated_at = ? WHERE id = ?`, agent, sessionID, now, convID)
		if err != nil {
			return err
		}
		if err := sqldb.AffectedOne(res); err != nil {
			return err
		}
		res, err = tx.ExecContext(ctx, `UPDATE grants SET removed_at = ?, removed_by = ?
			WHERE conversation_id = ? AND removed_at IS NULL`, now, by, convID)
		if err != nil {
			return err
		}
		n, err := sqldb.RowsAffected(res)
		revoked = int(n)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("switch agent of conversation %s: %w", convID, err)
	}
	return revoked, nil
}

// setConversationField updates one text column; column is a constant chosen
// by the callers above, never user input.
func (s *Store) setConversationField(ctx context.Context, convID, column, value string) error {
	res, err := s.db.Exec(ctx, false, `UPDATE conversations SET `+column+` = ?, updated_at = ? WHERE id = ?`,
		value, s.db.NowMS(), convID)
	if err != nil {
		return fmt.Errorf("set %s of conversation %s: %w", column, convID, err)
	}
	n, err := sqldb.RowsAffected(res)
	if err != nil {
		return fmt.Errorf("set %s of conversation %s: %w", column, convID, err)
	}
	if n == 0 {
		return fmt.Errorf("set %s of conversation %s: %w", column, convID, sqldb.ErrNotFound)
	}
	return nil
}

// TouchConversation records activity in conversation convID now.
func (s *Store) TouchConversation(ctx context.Context, convID string) error {
	res, err := s.db.Exec(ctx, false, `UPDATE conversations SET last_active_at = ? WHERE id = ?`, s.db.NowMS(), convID)
	if err != nil {
		return fmt.Errorf("touch conversation %s: %w", convID, err)
	}
	n, err := sqldb.RowsAffected(res)
	if err != nil {
		return fmt.Errorf("touch conversation %s: %w", convID, err)
	}
	if n == 0 {
		return fmt.Errorf("touch conversation %s: %w", convID, sqldb.ErrNotFound)
	}
	return nil
}

// conversationKeyTx returns the key of conversation convID inside tx, or an
// error wrapping sqldb.ErrNotFound.
func conversationKeyTx(ctx context.Context, tx *sql.Tx, convID string) (ConversationKey, error) {
	var k ConversationKey
	err := tx.QueryRowContext(ctx, `SELECT bot, channel, thread FROM conversations WHERE id = ?`, convID).
		Scan(&k.Bot, &k.Channel, &k.Thread)
	if errors.Is(err, sql.ErrNoRows) {
		return ConversationKey{}, fmt.Errorf("conversation %s: %w", convID, sqldb.ErrNotFound)
	}
	if err != nil {
		return ConversationKey{}, fmt.Errorf("get conversation %s: %w", convID, err)
	}
	return k, nil
}

// SessionIDs returns every session id a conversation currently uses (the
// ones a spawn would resume).
func (s *Store) SessionIDs(ctx context.Context) (map[string]bool, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT DISTINCT session_id FROM conversations WHERE session_id <> ''`)
	if err != nil {
		return nil, fmt.Errorf("list session ids: %w", err)
	}
	defer rows.Close()
	out := make(map[string]bool)
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("list session ids: %w", err)
		}
		out[id] = true
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list session ids: %w", err)
	}
	return out, nil
}
