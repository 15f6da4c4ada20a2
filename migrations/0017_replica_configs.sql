-- 0017_replica_configs: the config file each bridge process on this
-- database runs, so that a replica whose file differs can say so.
--
-- One row per live process (replica), written at start, at each applied
-- reload and on a heartbeat; removed when the process stops (a crashed
-- one's row ages out: readers look only at recent seen_at).
--   replica    the process's replica id (hostname-pid unless configured)
--   file_hash  hex SHA-256 of the config file's bytes in force
--   generation the config generation in force in that process
--   applied_at Unix ms: when that generation took effect
--   seen_at    Unix ms: the process's last heartbeat
-- See store/replica_configs.go.
CREATE TABLE replica_configs (
    replica    TEXT    PRIMARY KEY NOT NULL,
    file_hash  TEXT    NOT NULL,
    generation INTEGER NOT NULL,
    applied_at INTEGER NOT NULL,
    seen_at    INTEGER NOT NULL
);
