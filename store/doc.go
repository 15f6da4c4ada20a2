// Package store is the bridge's durable state in one SQLite file
// (mattn/go-sqlite3, WAL; Open) or a PostgreSQL database (jackc/pgx/v5
// through database/sql; OpenPostgres): conversations, the inbox ledger of
// inbound messages, the outbox of final replies, the approvals audit log,
// grants, usage, schedules, the web console's data, leases and signals for
// replicas. Opening applies the embedded schema migrations of the
// database's dialect (package migrations). Copy moves an installation from
// one database to the other.
//
// # Layout
//
// Store is what callers use: one type whose methods are those of the
// repositories it composes, each a package of its own on one shared
// database handle:
//
//   - sqldb: the handle — read pool, one writer behind a write gate, the
//     dialect seam (SQLite or PostgreSQL), placeholder rebinding, the
//     migration runner, write health (full disk), the owner lock, the
//     shared sentinel errors;
//   - convstore: conversations and what refers to them — sessions, the
//     inbox ledger, the outbox, approvals, grants, usage and spend,
//     feedback, the hand-off audit log, the operator view's queries;
//   - schedstore: schedules;
//   - webstore: the web console's messages, uploads, conversations,
//     sessions and tool calls;
//   - coord: leases with fencing tokens and Notify/Listen signals;
//   - dbcopy: Copy (bridge migrate-store).
//
// This package keeps what spans them — Open, Prune and the Pruner, the
// config reload audit — and names their types for callers (store.Schedule
// is schedstore.Schedule). The concurrency and durability rules of every
// method are sqldb's; the inbox and outbox state machines are convstore's.
//
// # Retention
//
// Prune deletes what is finished and older than a cutoff (the bridge runs it
// in the background with the configured retention, see Pruner): final inbox
// rows, posted or failed outbox rows, decided approvals, usage rows,
// ratings, hand-off audit rows, and
// conversations that have been inactive since before the cutoff and have
// nothing left that is not finished. Undelivered messages, unposted replies
// and open approvals are never pruned, however old.
package store
