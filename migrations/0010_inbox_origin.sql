-- 0010_inbox_origin: who a ledger message comes from, which decides what it
-- may do (issue 20, "origin decides authority").
--
-- origin is 'person' (a message someone wrote on a platform: it may be a
-- chat command and carries its author's rights) or 'schedule' (a schedule's
-- firing: always a prompt for the agent, never a command, and nobody's
-- rights); 'agent' is reserved for prompts the bridge's agent tools would
-- submit. schedule_id names the schedule of a 'schedule' message (0 when
-- unknown). Messages recorded before this migration by a schedule's firing
-- (platform_msg_id "schedule-<id>-<unix>") become 'schedule' messages, so a
-- pending one is not run as a command after the upgrade; the placeholder
-- author 'schedule' of a config schedule's run becomes '' (nobody).
ALTER TABLE inbox ADD COLUMN origin TEXT NOT NULL DEFAULT 'person';
ALTER TABLE inbox ADD COLUMN schedule_id INTEGER NOT NULL DEFAULT 0;
UPDATE inbox SET origin = 'schedule' WHERE platform_msg_id LIKE 'schedule-%';
UPDATE inbox SET user_id = '' WHERE origin = 'schedule' AND user_id = 'schedule';
