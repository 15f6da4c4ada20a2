package store

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/agentbridge/agentbridge/store/sqldb"
	"github.com/agentbridge/agentbridge/store/webstore"
)

// defaultPruneBatch is how many rows one Prune transaction deletes at most,
// so that a large backlog never holds the write lock for long: messages
// arriving meanwhile wait for one batch, not for the whole prune.
const defaultPruneBatch = 500

// PruneCounts says how many rows Prune deleted, per table.
type PruneCounts struct {
	Inbox         int64 // final ledger messages (completed, cancelled, failed)
	Outbox        int64 // posted replies, and replies given up on (failed)
	Approvals     int64 // decided permission requests
	Usage         int64 // usage rows
	Conversations int64 // conversations left with nothing else
	Web           int64 // web console messages and uploads (package webstore)
	Feedback      int64 // ratings of answers (package convstore)
	Handoff       int64 // hand-off audit rows (package convstore)
}

// Total is the number of rows deleted.
func (c PruneCounts) Total() int64 {
	return c.Inbox + c.Outbox + c.Approvals + c.Usage + c.Conversations + c.Web + c.Feedback + c.Handoff
}

// LogValue groups the counts in log records.
func (c PruneCounts) LogValue() slog.Value {
	return slog.GroupValue(
		slog.Int64("inbox", c.Inbox),
		slog.Int64("outbox", c.Outbox),
		slog.Int64("approvals", c.Approvals),
		slog.Int64("usage", c.Usage),
		slog.Int64("conversations", c.Conversations),
		slog.Int64("web", c.Web),
		slog.Int64("feedback", c.Feedback),
		slog.Int64("handoff", c.Handoff),
	)
}

// Prune deletes what is finished and older than before:
//
//   - inbox messages in a final state (completed, cancelled, failed) last
//     updated before it; pending, sent and started messages never go;
//   - outbox replies posted, or given up on (failed), before it; pending
//     replies never go;
//   - approvals decided before it; open ones never go;
//   - usage rows recorded before it (so !cost totals cover the retention
//     window, not all time);
//   - ratings of answers (feedback) last changed before it;
//   - hand-off audit rows (attach, detach, export, import, refusals)
//     recorded before it;
//   - web console messages last updated, and uploads made, before it;
//   - conversations created, changed and last active before it that have no
//     row left in any table referring to them (the ones above, and any other
//     table with a foreign key to conversations, e.g. grants, which are
//     never pruned). An old conversation therefore stays as long as anything
//     of it is unfinished or kept. The next message in a deleted
//     conversation's thread starts a new conversation: a new agent session
//     (the CLI's own transcript of the old one is usually gone by then too),
//     the author as owner, no !model or !mode override.
//
// Consequences: someone whose last message in a conversation was pruned is
// no longer one of its participants (IsParticipant reads the ledger) until
// they write again; usage totals cover the retention period; a grant keeps
// the id of the approval that created it after that approval was pruned
// (who granted it stays in the grant). A message that arrives for a
// conversation just as Prune deletes it fails to enqueue (sqldb.ErrNotFound) and
// is redelivered by its platform, which creates the conversation anew.
//
// Rows are deleted in batches, each its own transaction, so a large backlog
// does not block writers for long; a cancelled ctx stops between (or
// inside) batches, keeping what was committed. It returns how many rows
// went, also on error.
func (s *Store) Prune(ctx context.Context, before time.Time) (PruneCounts, error) {
	var c PruneCounts
	if before.IsZero() {
		return c, fmt.Errorf("prune: zero cutoff: %w", ErrInvalidArgument)
	}
	cut := before.UnixMilli()
	steps := []struct {
		table string
		n     *int64
		where string
		args  []any
	}{
		{"inbox", &c.Inbox, `state IN (?, ?, ?) AND updated_at < ?`,
			[]any{InboxCompleted, InboxCancelled, InboxFailed, cut}},
		{"outbox", &c.Outbox, `state IN (?, ?) AND updated_at < ?`,
			[]any{OutboxPosted, OutboxFailed, cut}},
		{"approvals", &c.Approvals, `decided_at IS NOT NULL AND decided_at < ?`, []any{cut}},
		{"usage", &c.Usage, `created_at < ?`, []any{cut}},
		{"feedback", &c.Feedback, `updated_at < ?`, []any{cut}},
		{"handoff_audit", &c.Handoff, `at < ?`, []any{cut}},
	}
	for _, st := range steps {
		n, err := s.db.DeleteBatched(ctx, st.table, "seq", st.where, st.args, s.pruneBatch)
		*st.n = n
		if err != nil {
			return c, fmt.Errorf("prune %s: %w", st.table, err)
		}
	}
	web, err := webstore.Prune(ctx, s.db, cut, s.pruneBatch)
	c.Web = web
	if err != nil {
		return c, fmt.Errorf("prune web console: %w", err)
	}
	where, err := s.idleConversationWhere(ctx)
	if err != nil {
		return c, fmt.Errorf("prune conversations: %w", err)
	}
	c.Conversations, err = s.db.DeleteBatched(ctx, "conversations", "id", where, []any{cut, cut, cut}, s.pruneBatch)
	if err != nil {
		return c, fmt.Errorf("prune conversations: %w", err)
	}
	return c, nil
}

// idleConversationWhere builds the condition for conversations Prune may
// delete: created, changed and last active before the cutoff (three ?
// parameters) and not referred to by any row of a table with a foreign key
// to conversations. The referring tables are read from the schema, so a
// table added by a later migration keeps its conversations without a change
// here (and a delete can never fail on a foreign key).
func (s *Store) idleConversationWhere(ctx context.Context) (string, error) {
	rows, err := s.db.QueryContext(ctx, s.db.Dialect().ConversationRefs())
	if err != nil {
		return "", fmt.Errorf("find tables referring to conversations: %w", err)
	}
	refs, err := sqldb.Collect(rows, func(r sqldb.Scanner) (string, error) {
		var table, col string
		if err := r.Scan(&table, &col); err != nil {
			return "", err
		}
		return fmt.Sprintf(`NOT EXISTS (SELECT 1 FROM %s r WHERE r.%s = conversations.id)`, sqldb.QuoteIdent(table), sqldb.QuoteIdent(col)), nil
	})
	if err != nil {
		return "", fmt.Errorf("find tables referring to conversations: %w", err)
	}
	conds := append([]string{`created_at < ?`, `updated_at < ?`, `last_active_at < ?`}, refs...)
	return strings.Join(conds, " AND "), nil
}
