-- 0012_card_replies (PostgreSQL): what a reply quotes. See
-- ../0012_card_replies.sql.
--
-- The SQLite file also fills approvals.card_msg_id of older cards from
-- card_ref; here no backfill is needed: PostgreSQL databases start at this
-- release, either empty or filled by `bridge migrate-store` from a SQLite
-- file migrated to the newest schema first.
ALTER TABLE inbox ADD COLUMN reply_to TEXT NOT NULL DEFAULT '';
ALTER TABLE inbox ADD COLUMN quoted TEXT NOT NULL DEFAULT '';
ALTER TABLE approvals ADD COLUMN card_msg_id TEXT NOT NULL DEFAULT '';
CREATE INDEX approvals_card_msg ON approvals (conversation_id, card_msg_id) WHERE card_msg_id <> '';
