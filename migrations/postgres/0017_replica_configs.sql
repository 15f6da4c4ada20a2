-- 0017_replica_configs (PostgreSQL): the config file each bridge process
-- on this database runs. See ../0017_replica_configs.sql.
CREATE TABLE replica_configs (
    replica    TEXT    PRIMARY KEY NOT NULL,
    file_hash  TEXT    NOT NULL,
    generation BIGINT  NOT NULL,
    applied_at BIGINT  NOT NULL,
    seen_at    BIGINT  NOT NULL
);
