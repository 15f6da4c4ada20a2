-- 0023_agent_override (PostgreSQL): the profile !agent moved a
-- conversation to. See ../0023_agent_override.sql.
ALTER TABLE conversations ADD COLUMN agent_override TEXT NOT NULL DEFAULT '';
