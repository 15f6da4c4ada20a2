-- 0007_schedules: prompts the bridge sends to an agent on a cron schedule.
-- (Assigned 0006; renumbered because main gave 0006 to the web console.)
--
-- A schedule comes from the config file (source 'config', kept in step with
-- the YAML at every start by name), from a chat command ('chat') or from
-- the agent's schedule tool ('agent'). Each run is an ordinary inbox
-- message whose platform_msg_id is "schedule-<id>-<unix seconds of the
-- scheduled time>", so a run is recorded at most once even across a crash.
--
-- last_fire_at is the scheduled time last handled (run or skipped): after
-- a restart, the firings between it and now were missed. last_inbox_id is
-- the ledger message of the last run: while it is unfinished, the next
-- firing is skipped (no overlapping runs). Removed schedules keep their row
-- (removed_at, removed_by) for the audit of who removed what.
CREATE TABLE schedules (
    id              INTEGER PRIMARY KEY AUTOINCREMENT, -- what !schedule list shows and !schedule rm takes
    source          TEXT    NOT NULL CHECK (source IN ('config', 'chat', 'agent')),
    name            TEXT    NOT NULL,
    bot             TEXT    NOT NULL,
    channel         TEXT    NOT NULL,
    thread          TEXT    NOT NULL DEFAULT '',       -- the target conversation's thread; '' = the channel
    new_thread      INTEGER NOT NULL DEFAULT 0,        -- 1: every run starts a new thread in channel
    cron            TEXT    NOT NULL,
    tz              TEXT    NOT NULL DEFAULT '',       -- IANA zone; '' = the bridge's local time
    prompt          TEXT    NOT NULL,
    agent           TEXT    NOT NULL DEFAULT '',       -- agent profile of new conversations; '' = the bot's
    catch_up        INTEGER NOT NULL DEFAULT 1,        -- 1: a firing missed while down runs once at start
    created_by      TEXT    NOT NULL DEFAULT '',       -- user id (chat), the conversation's owner (agent), '' (config)
    conversation_id TEXT    NOT NULL DEFAULT '',       -- chat and agent: where it was made (the agent's tools act only there)
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL,
    last_fire_at    INTEGER NOT NULL DEFAULT 0,
    last_inbox_id   TEXT    NOT NULL DEFAULT '',
    runs            INTEGER NOT NULL DEFAULT 0,
    skips           INTEGER NOT NULL DEFAULT 0,        -- firings skipped (overlap, or missed without catch_up)
    removed_at      INTEGER,                           -- NULL while active
    removed_by      TEXT    NOT NULL DEFAULT ''
);
CREATE UNIQUE INDEX schedules_config_name ON schedules (name) WHERE source = 'config' AND removed_at IS NULL;
CREATE INDEX schedules_channel ON schedules (bot, channel) WHERE removed_at IS NULL;
CREATE INDEX schedules_conversation ON schedules (conversation_id) WHERE removed_at IS NULL;
