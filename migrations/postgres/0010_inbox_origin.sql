-- 0010_inbox_origin (PostgreSQL): who a ledger message comes from. See
-- ../0010_inbox_origin.sql.
ALTER TABLE inbox ADD COLUMN origin TEXT NOT NULL DEFAULT 'person';
ALTER TABLE inbox ADD COLUMN schedule_id BIGINT NOT NULL DEFAULT 0;
UPDATE inbox SET origin = 'schedule' WHERE platform_msg_id LIKE 'schedule-%';
UPDATE inbox SET user_id = '' WHERE origin = 'schedule' AND user_id = 'schedule';
