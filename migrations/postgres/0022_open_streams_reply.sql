-- 0022_open_streams_reply (PostgreSQL): the reply a recorded live message
-- is to become. See ../0022_open_streams_reply.sql.
ALTER TABLE open_streams ADD COLUMN reply_id TEXT NOT NULL DEFAULT '';
