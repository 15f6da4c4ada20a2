package sqldb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
)

// Dialect is what differs between the store's two databases, SQLite and
// PostgreSQL. Everything else — every repository method and its SQL — is
// shared: the statements are written with '?' placeholders and portable
// SQL (ON CONFLICT … DO NOTHING, RETURNING, CASE instead of boolean sums,
// integers for times and flags), and the PostgreSQL connections rewrite the
// placeholders to $1, $2, … (rebind.go). A method that needs SQL only one
// of them speaks asks its dialect for it. The two implementations are
// this package's; the unexported methods serve Open and the migrations.
type Dialect interface {
	// Name is the configured driver name: "sqlite" or "postgres".
	Name() string
	// versionTable creates schema_version if it does not exist.
	versionTable() string
	// checkConn verifies the connection settings the store relies on.
	checkConn(ctx context.Context, db *sql.DB) error
	// lockSchema serialises schema changes of concurrent processes for the
	// rest of tx (SQLite: BEGIN IMMEDIATE already does).
	lockSchema(ctx context.Context, tx *sql.Tx) error
	// UTCDay is an expression for the UTC day (YYYY-MM-DD) of the Unix
	// millisecond column col.
	UTCDay(col string) string
	// ConversationRefs is a query returning (table, column) of every
	// foreign key that refers to conversations, ordered.
	ConversationRefs() string
	// Tables is a query returning the name of every table, ordered.
	Tables() string
	// Snapshot is how Copy reads its source: one consistent view.
	Snapshot() *sql.TxOptions
	// AfterCopy runs after Copy filled table in tx: the table's id
	// sequence must continue after the copied ids.
	AfterCopy(ctx context.Context, tx *sql.Tx, table string) error
	// RowID names the hidden column that identifies a row of any table,
	// for deleting in batches from a table without a one-column key.
	RowID() string
	// WebMessageSearch returns the condition that row m of web_messages
	// holds each of words (letters and digits only, at least one) as the
	// start of one of its words, case-folded, and the one argument that
	// condition binds at param (a numbered placeholder, "?5").
	WebMessageSearch(param string, words []string) (cond, arg string)
	// IndexTable reports whether table is a search index the database
	// keeps itself (Copy leaves it out: the target rebuilds its own).
	IndexTable(table string) bool
	// ClockMS is an expression for the database's clock in Unix ms, the
	// same value wherever it appears in one statement (leases).
	ClockMS() string
	// ForShare is the clause that makes a SELECT in a write transaction
	// hold its rows against concurrent updates until the commit ("" where
	// the transaction already excludes every other writer).
	ForShare() string
}

// sqliteDialect is the embedded default (mattn/go-sqlite3).
type sqliteDialect struct{}

func (sqliteDialect) Name() string { return DriverSQLite }

func (sqliteDialect) versionTable() string {
	return `CREATE TABLE IF NOT EXISTS schema_version (
	version    INTEGER PRIMARY KEY NOT NULL,
	name       TEXT    NOT NULL,
	applied_at INTEGER NOT NULL
)`
}

func (sqliteDialect) checkConn(ctx context.Context, db *sql.DB) error {
	var journal string
	if err := db.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&journal); err != nil {
		return fmt.Errorf("read journal_mode: %w", err)
	}
	if !strings.EqualFold(journal, "wal") {
		return fmt.Errorf("journal_mode is %q, want wal", journal)
	}
	var fk int
	if err := db.QueryRowContext(ctx, "PRAGMA foreign_keys").Scan(&fk); err != nil {
		return fmt.Errorf("read foreign_keys: %w", err)
	}
	if fk != 1 {
		return errors.New("foreign keys are not enabled (is the binary built with cgo?)")
	}
	return nil
}

func (sqliteDialect) lockSchema(context.Context, *sql.Tx) error { return nil }

func (sqliteDialect) UTCDay(col string) string {
	return `strftime('%Y-%m-%d', ` + col + ` / 1000, 'unixepoch')`
}

func (sqliteDialect) ConversationRefs() string {
	return `SELECT m.name, f."from" FROM sqlite_master m, pragma_foreign_key_list(m.name) f
		WHERE m.type = 'table' AND f."table" = 'conversations' ORDER BY m.name, f."from"`
}

func (sqliteDialect) Tables() string {
	return `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name`
}

// Snapshot: a transaction on the store's connections is BEGIN IMMEDIATE
// (the DSN's _txlock): it also keeps writers out while Copy reads.
func (sqliteDialect) Snapshot() *sql.TxOptions { return nil }

// AfterCopy: AUTOINCREMENT already continues after the largest id inserted.
func (sqliteDialect) AfterCopy(context.Context, *sql.Tx, string) error { return nil }

func (sqliteDialect) RowID() string { return "rowid" }

// WebMessageSearch: the FTS4 table web_messages_fts (migration 0014), one
// quoted prefix term per word, all required.
func (sqliteDialect) WebMessageSearch(param string, words []string) (string, string) {
	terms := make([]string, len(words))
	for i, w := range words {
		terms[i] = `"` + w + `*"`
	}
	return `m.seq IN (SELECT docid FROM web_messages_fts WHERE web_messages_fts MATCH ` + param + `)`,
		strings.Join(terms, " ")
}

// IndexTable: web_messages_fts and the shadow tables FTS4 keeps for it
// (web_messages_fts_segments, …), filled by migration 0014's triggers.
func (sqliteDialect) IndexTable(table string) bool {
	return table == "web_messages_fts" || strings.HasPrefix(table, "web_messages_fts_")
}

// ClockMS: SQLite's 'now' is fixed for the whole of one statement's step.
func (sqliteDialect) ClockMS() string { return `CAST(unixepoch('subsec') * 1000 AS INTEGER)` }

// ForShare: BEGIN IMMEDIATE (the DSN's _txlock) already holds the database
// against every other writer until the commit.
func (sqliteDialect) ForShare() string { return "" }

// postgresDialect is PostgreSQL through pgx's database/sql driver.
type postgresDialect struct{}

// schemaLockKey is the advisory lock (pg_advisory_xact_lock) that
// serialises schema changes of bridges opening the same database. The
// number is arbitrary but fixed: "agentbri" in ASCII.
const schemaLockKey int64 = 0x6167656e74627269

func (postgresDialect) Name() string { return DriverPostgres }

func (postgresDialect) versionTable() string {
	return `CREATE TABLE IF NOT EXISTS schema_version (
	version    BIGINT PRIMARY KEY NOT NULL,
	name       TEXT   NOT NULL,
	applied_at BIGINT NOT NULL
)`
}

func (postgresDialect) checkConn(ctx context.Context, db *sql.DB) error {
	var v int
	if err := db.QueryRowContext(ctx, "SELECT current_setting('server_version_num')::int").Scan(&v); err != nil {
		return fmt.Errorf("read server version: %w", err)
	}
	if v < minPostgresVersion {
		return fmt.Errorf("PostgreSQL server version %d, need %d or newer", v, minPostgresVersion)
	}
	return nil
}

func (postgresDialect) lockSchema(ctx context.Context, tx *sql.Tx) error {
	if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock(?)", schemaLockKey); err != nil {
		return fmt.Errorf("lock the schema: %w", err)
	}
	return nil
}

func (postgresDialect) UTCDay(col string) string {
	return `to_char(to_timestamp(` + col + ` / 1000) AT TIME ZONE 'UTC', 'YYYY-MM-DD')`
}

func (postgresDialect) ConversationRefs() string {
	return `SELECT r.relname::text, a.attname::text FROM pg_constraint c
		JOIN pg_class r ON r.oid = c.conrelid
		JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = ANY (c.conkey)
		WHERE c.contype = 'f' AND c.confrelid = 'conversations'::regclass
		ORDER BY 1, 2`
}

func (postgresDialect) Tables() string {
	return `SELECT table_name::text FROM information_schema.tables
		WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY 1`
}

func (postgresDialect) Snapshot() *sql.TxOptions {
	return &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true}
}

// afterCopy moves the sequence of each identity column of table past the
// largest value copied (rows inserted with explicit ids leave it behind).
func (postgresDialect) AfterCopy(ctx context.Context, tx *sql.Tx, table string) error {
	rows, err := tx.QueryContext(ctx, `SELECT column_name::text FROM information_schema.columns
		WHERE table_schema = current_schema() AND table_name = ? AND is_identity = 'YES'`, table)
	if err != nil {
		return fmt.Errorf("identity columns: %w", err)
	}
	cols, err := Collect(rows, func(r Scanner) (string, error) {
		var c string
		err := r.Scan(&c)
		return c, err
	})
	if err != nil {
		return fmt.Errorf("identity columns: %w", err)
	}
	for _, c := range cols {
		q := `SELECT setval(pg_get_serial_sequence(?, ?), COALESCE(MAX(` + QuoteIdent(c) + `), 0) + 1, false) FROM ` + QuoteIdent(table)
		if _, err := tx.ExecContext(ctx, q, QuoteIdent(table), c); err != nil {
			return fmt.Errorf("advance the sequence of %s: %w", c, err)
		}
	}
	return nil
}

// RowID: ctid, the row's physical address, is stable within the statement
// that reads and deletes it.
func (postgresDialect) RowID() string { return "ctid" }

// webSearchVector is the expression web_messages_search (migration 0014)
// indexes: the text's words, ASCII punctuation read as spaces, case-folded.
const webSearchVector = `to_tsvector('simple', regexp_replace(m.text, '[[:punct:]]+', ' ', 'g'))`

// WebMessageSearch: the expression index web_messages_search, one prefix
// term (word:*) per word, all required. Words are letters and digits, so
// nothing in them is a tsquery operator.
func (postgresDialect) WebMessageSearch(param string, words []string) (string, string) {
	terms := make([]string, len(words))
	for i, w := range words {
		terms[i] = w + ":*"
	}
	return webSearchVector + ` @@ to_tsquery('simple', ` + param + `)`, strings.Join(terms, " & ")
}

// IndexTable: PostgreSQL's search index is an index, not a table.
func (postgresDialect) IndexTable(string) bool { return false }

// ClockMS: now() is the start of the current transaction — for a statement
// on its own, the start of that statement — on the server's clock.
func (postgresDialect) ClockMS() string { return `(EXTRACT(EPOCH FROM now()) * 1000)::bigint` }

// ForShare: FOR SHARE conflicts with the row lock an UPDATE or INSERT … ON
// CONFLICT DO UPDATE takes, so such a statement waits for the commit and
// then sees the committed row (READ COMMITTED re-checks its WHERE).
func (postgresDialect) ForShare() string { return " FOR SHARE" }
