// Package migrations holds the bridge database schema as numbered SQL files
// embedded into the binary.
//
// Each file is named NNNN_description.sql (four-digit version starting at
// 0001, no gaps, lower-case description) and begins with a "--" header comment
// that says what it changes. A file contains plain DDL/DML without BEGIN or
// COMMIT: the store runs every file in its own transaction and records its
// version in the same transaction. Files are append-only: once released, a
// migration is never edited; schema changes go into a new, higher-numbered
// file.
package migrations
