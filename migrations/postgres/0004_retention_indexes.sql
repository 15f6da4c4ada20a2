-- 0004_retention_indexes (PostgreSQL): indexes for pruning by age
-- (store.Prune). See ../0004_retention_indexes.sql.
CREATE INDEX inbox_state_updated ON inbox (state, updated_at);
CREATE INDEX outbox_state_updated ON outbox (state, updated_at);
CREATE INDEX outbox_conversation ON outbox (conversation_id);
CREATE INDEX usage_created ON usage (created_at);
