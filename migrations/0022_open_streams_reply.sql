-- 0022_open_streams_reply: the reply (outbox id) that a conversation's
-- recorded live message is to become (Discord: the turn's live message is
-- edited into its answer). Whoever answers next after the holder died
-- inside that edit makes it again instead of posting the answer beside
-- the message. '' when the message is not (yet) the reply's.
ALTER TABLE open_streams ADD COLUMN reply_id TEXT NOT NULL DEFAULT '';
