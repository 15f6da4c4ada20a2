package convstore

import (
	"context"
	"fmt"
)

// NoteCommand is the error text the bridge records (with MarkInbox) on a
// ledger message it consumed as a chat command. IsParticipant does not count
// such messages: running "!help" does not make someone a participant.
const NoteCommand = "command"

// IsParticipant reports whether userID wrote a message in the ledger of
// conversation convID, other than the message exceptID (the one being
// handled, typically), other than messages marked with NoteCommand, and
// other than the runs of schedules they made (only a person's own
// messages count: OriginPerson). An empty userID is never a participant.
func (s *Store) IsParticipant(ctx context.Context, convID, userID, exceptID string) (bool, error) {
	if userID == "" {
		return false, nil
	}
	var ok bool
	err := s.db.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM inbox
		WHERE conversation_id = ? AND user_id = ? AND id <> ? AND error <> ? AND origin = ?)`,
		convID, userID, exceptID, NoteCommand, OriginPerson).Scan(&ok)
	if err != nil {
		return false, fmt.Errorf("is %s a participant of conversation %s: %w", userID, convID, err)
	}
	return ok, nil
}
