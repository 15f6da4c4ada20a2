-- 0004_retention_indexes: indexes for pruning by age (store.Prune, the
-- `retention` setting).
--
-- Prune deletes finished rows older than a cutoff in small batches, once an
-- hour. Without these indexes every batch would scan every finished row of
-- the table; with them it reads only the rows it deletes. The conversation
-- index lets Prune check cheaply that a conversation has no reply left;
-- approvals are found by the existing approvals_open (decided_at, seq).
CREATE INDEX inbox_state_updated ON inbox (state, updated_at);
CREATE INDEX outbox_state_updated ON outbox (state, updated_at);
CREATE INDEX outbox_conversation ON outbox (conversation_id);
CREATE INDEX usage_created ON usage (created_at);
