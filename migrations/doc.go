// Package migrations holds the bridge database schema as numbered SQL files
// embedded into the binary, once per database: SQLite's at the root,
// PostgreSQL's under postgres/. Both sets carry the same history — the same
// versions with the same file names, each PostgreSQL file the same change
// in PostgreSQL's types — and a test keeps them matched one to one, so a
// schema change is always written twice.
//
// Each file is named NNNN_description.sql (four-digit version starting at
// 0001, no gaps, lower-case description) and begins with a "--" header comment
// that says what it changes. A file contains plain DDL/DML without BEGIN or
// COMMIT: the store runs every file in its own transaction and records its
// version in the same transaction. Files are append-only: once released, a
// migration is never edited; schema changes go into a new, higher-numbered
// file.
package migrations
