-- 0016_leases: leases for replicas sharing one database.
--
-- One row per resource ever leased ("conversation:<id>",
-- "gateway:discord:<bot>", "device:whatsapp:<bot>"). Rows are kept after a
-- release or an expiry so that the fencing token keeps counting up.
--   owner       the replica holding it; '' once released
--   token       fencing token: 1 for the first holder, one more each time
--               the lease is taken rather than continued (a new owner, or
--               the same one after an expiry or a release)
--   expires_at  Unix ms on the database's clock
--   acquired_at Unix ms on the database's clock: when the owner took it
-- See store/leases.go.
CREATE TABLE leases (
    resource    TEXT    PRIMARY KEY NOT NULL,
    owner       TEXT    NOT NULL,
    token       INTEGER NOT NULL,
    expires_at  INTEGER NOT NULL,
    acquired_at INTEGER NOT NULL
);
CREATE INDEX leases_owner ON leases (owner, resource);
