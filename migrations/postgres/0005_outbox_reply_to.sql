-- 0005_outbox_reply_to (PostgreSQL): the message a reply quotes. See
-- ../0005_outbox_reply_to.sql.
ALTER TABLE outbox ADD COLUMN reply_to TEXT NOT NULL DEFAULT '';
