// Package store is the bridge's durable state in one SQLite file
// (mattn/go-sqlite3, WAL; Open) or a PostgreSQL database (jackc/pgx/v5
// through database/sql; OpenPostgres): conversations, the inbox ledger of
// inbound messages, the outbox of final replies, the approvals audit log and
// usage accounting. Opening applies the embedded schema migrations of the
// database's dialect (package migrations). Both databases run the same
// repository methods: the SQL is written once, portable, with '?'
// placeholders that PostgreSQL's connections rebind to $n (rebind.go); the
// few statements that differ come from the dialect (dialect.go). Copy moves
// an installation from one to the other.
//
// # Concurrency
//
// A *Store is safe for concurrent use by many goroutines and by several
// processes on the same file. Each write is one statement or one BEGIN
// IMMEDIATE transaction (DSN _txlock=immediate), so read-check-write sequences
// such as state transitions cannot interleave; writers wait for each other up
// to the busy timeout (5 s) instead of failing. Reads never block writers (WAL).
// Methods honour ctx: a cancelled context aborts the statement and rolls back.
//
// On PostgreSQL the store's writes also go through one connection (READ
// COMMITTED transactions), so the read-check-write sequences of one process
// cannot interleave either; migrations take an advisory lock, so bridges
// opening one database at once apply each exactly once. Several processes
// writing one database at run time are not supported yet: HoldOwner keeps a
// second bridge out (see docs/postgres.md). Leases with fencing tokens
// (leases.go) and Notify/Listen signals (signals.go) are the primitives
// replicas will coordinate with.
//
// # Durability
//
// Every method has committed its change when it returns nil; nothing is
// buffered in memory. The database runs with synchronous=FULL in WAL mode:
// every commit is synced to disk (fsync of the WAL) before the method
// returns, so a committed change survives a crash of the process, of the
// operating system and a power loss. This is what lets the bridge
// acknowledge a platform message once Enqueue returned. (NORMAL would sync
// only at checkpoints: after a power loss the most recent commits, messages
// already acknowledged, could be rolled back.) The cost is one fsync per
// write transaction; BENCHMARKS.md records it.
//
// # Retention
//
// Prune deletes what is finished and older than a cutoff (the bridge runs it
// in the background with the configured retention, see Pruner): final inbox
// rows, posted or failed outbox rows, decided approvals, usage rows, and
// conversations that have been inactive since before the cutoff and have
// nothing left that is not finished. Undelivered messages, unposted replies
// and open approvals are never pruned, however old.
//
// # Inbox state machine
//
//	pending ──► sent ──► started ──► completed | cancelled | failed
//	   ▲          │         │
//	   └──────────┴─────────┘  ResetForRedelivery only (after a crash)
//
// MarkInbox moves a message only forward: to any state later in the chain,
// skipping is allowed (pending → cancelled when a queued message is dropped),
// re-marking the current state is an idempotent no-op, and the three final
// states never change. Anything else returns ErrBadTransition. Moving sent or
// started back to pending is reserved for ResetForRedelivery, which also
// counts the attempt.
//
// # Outbox and approvals
//
// Outbox rows go pending → posted, or pending → failed when the caller gives
// up on a reply (MarkOutboxFailed); MarkOutboxRetry counts a failed attempt
// that will be retried and remembers when the first one failed. An approval
// is open until its first decision is recorded; later decisions return
// ErrAlreadyDecided, so a click racing a timeout is decided exactly once.
//
// # Schema version
//
// The schema version is the highest version recorded in the schema_version
// table (one row per applied migration, with its file name and time). A
// table, rather than PRAGMA user_version, keeps the history of when each
// migration ran. Open refuses a database whose version is newer than the
// newest embedded migration (ErrSchemaTooNew) and never changes such a file.
package store
