-- 0008_team: whose turn a cost belongs to, and what a session is about
-- (spend limits, !sessions, !resume).
-- (Assigned 0007; renumbered because main gave 0007 to the schedules.)
--
-- usage.user_id is the person whose message started the turn ('' when
-- unknown, as for every row recorded before this migration); usage.bot is
-- the conversation's bot, copied into the row (and filled in here for old
-- rows) so that a limit sums a bot's spend over a time window from one
-- index, without a join. usage_session serves !sessions (cost per session).
--
-- conversations.summary is the first prompt of the conversation's current
-- agent session, cut to one line: '' until the agent got a message, and ''
-- again after !new. !resume moves it, with the session, to the conversation
-- that resumes it. conversations_channel lists a channel's conversations,
-- most recently active first.
ALTER TABLE usage ADD COLUMN user_id TEXT NOT NULL DEFAULT '';
ALTER TABLE usage ADD COLUMN bot TEXT NOT NULL DEFAULT '';
UPDATE usage SET bot = COALESCE((SELECT c.bot FROM conversations c WHERE c.id = usage.conversation_id), '');
CREATE INDEX usage_bot_created ON usage (bot, created_at, cost_usd);
CREATE INDEX usage_bot_user_created ON usage (bot, user_id, created_at, cost_usd);
CREATE INDEX usage_session ON usage (session_id);

ALTER TABLE conversations ADD COLUMN summary TEXT NOT NULL DEFAULT '';
CREATE INDEX conversations_channel ON conversations (bot, channel, last_active_at);
