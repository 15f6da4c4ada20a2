-- 0008_team (PostgreSQL): whose turn a cost belongs to, and what a session
-- is about. See ../0008_team.sql.
ALTER TABLE usage ADD COLUMN user_id TEXT NOT NULL DEFAULT '';
ALTER TABLE usage ADD COLUMN bot TEXT NOT NULL DEFAULT '';
UPDATE usage SET bot = COALESCE((SELECT c.bot FROM conversations c WHERE c.id = usage.conversation_id), '');
CREATE INDEX usage_bot_created ON usage (bot, created_at, cost_usd);
CREATE INDEX usage_bot_user_created ON usage (bot, user_id, created_at, cost_usd);
CREATE INDEX usage_session ON usage (session_id);

ALTER TABLE conversations ADD COLUMN summary TEXT NOT NULL DEFAULT '';
CREATE INDEX conversations_channel ON conversations (bot, channel, last_active_at);
