package convstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// ConversationTitle is the text of the first message a person wrote in the
// conversation that the ledger still holds ("" when none: the ledger is
// pruned after retention), for showing a conversation by what it is about.
func (s *Store) ConversationTitle(ctx context.Context, conversationID string) (string, error) {
	var text string
	err := s.db.QueryRowContext(ctx, `SELECT text FROM inbox
		WHERE conversation_id = ? AND origin = ? AND text <> '' ORDER BY seq LIMIT 1`,
		conversationID, string(OriginPerson)).Scan(&text)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("title of conversation %s: %w", conversationID, err)
	}
	return text, nil
}
