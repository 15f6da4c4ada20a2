// Package sqldb is the database handle the store's repositories share: one
// SQLite file (mattn/go-sqlite3, WAL; Open) or a PostgreSQL database
// (jackc/pgx/v5 through database/sql; OpenPostgres), its read pool and its
// one writer behind a write gate, the dialect seam, the placeholder
// rebinding, the migration runner, the write-health (full disk) tracking,
// the owner lock and the sentinel errors. It knows no table but
// schema_version: the repositories (packages convstore, webstore,
// schedstore, coord) hold the SQL of theirs, and package store composes
// them into one Store.
//
// Both databases run the same repository statements: the SQL is written
// once, portable, with '?' placeholders that PostgreSQL's connections
// rebind to $n (rebind.go); the few statements that differ come from the
// Dialect (dialect.go).
//
// # Concurrency
//
// A *DB is safe for concurrent use by many goroutines and by several
// processes on the same file. Each write is one statement (Exec) or one
// BEGIN IMMEDIATE transaction (WithTx; DSN _txlock=immediate), so
// read-check-write sequences such as state transitions cannot interleave;
// writers wait for each other up to the busy timeout (5 s) instead of
// failing. Reads never block writers (WAL). Methods honour ctx: a
// cancelled context aborts the statement and rolls back.
//
// On PostgreSQL the writes also go through one connection (READ COMMITTED
// transactions), so the read-check-write sequences of one process cannot
// interleave either; migrations take an advisory lock, so bridges opening
// one database at once apply each exactly once. Several processes writing
// one database at run time are not supported yet: HoldOwner keeps a second
// bridge out (see docs/postgres.md).
//
// # Durability
//
// Every write has committed its change when it returns nil; nothing is
// buffered in memory. The database runs with synchronous=FULL in WAL mode:
// every commit is synced to disk (fsync of the WAL) before the method
// returns, so a committed change survives a crash of the process, of the
// operating system and a power loss. This is what lets the bridge
// acknowledge a platform message once Enqueue returned. (NORMAL would sync
// only at checkpoints: after a power loss the most recent commits, messages
// already acknowledged, could be rolled back.) The cost is one fsync per
// write transaction; BENCHMARKS.md records it.
//
// # Schema version
//
// The schema version is the highest version recorded in the schema_version
// table (one row per applied migration, with its file name and time). A
// table, rather than PRAGMA user_version, keeps the history of when each
// migration ran. Open refuses a database whose version is newer than the
// newest migration it was given (ErrSchemaTooNew) and never changes such a
// file.
package sqldb
