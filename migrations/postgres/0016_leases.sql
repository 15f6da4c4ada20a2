-- 0016_leases (PostgreSQL): leases for replicas sharing one database. See
-- ../0016_leases.sql.
CREATE TABLE leases (
    resource    TEXT    PRIMARY KEY NOT NULL,
    owner       TEXT    NOT NULL,
    token       BIGINT  NOT NULL,
    expires_at  BIGINT  NOT NULL,
    acquired_at BIGINT  NOT NULL
);
CREATE INDEX leases_owner ON leases (owner, resource);
