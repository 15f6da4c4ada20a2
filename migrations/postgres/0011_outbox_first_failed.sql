-- 0011_outbox_first_failed (PostgreSQL): when a reply's first post attempt
-- failed. See ../0011_outbox_first_failed.sql.
ALTER TABLE outbox ADD COLUMN first_failed_at BIGINT NOT NULL DEFAULT 0;
