-- 0023_agent_override: the agent profile a person moved a conversation to
-- with !agent NAME ('' = the conversation's own profile, `agent`). It
-- outlives restarts; a config that no longer lists the profile for the
-- bot sends the conversation back to its default at its next message.
ALTER TABLE conversations ADD COLUMN agent_override TEXT NOT NULL DEFAULT '';
