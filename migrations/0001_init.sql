-- 0001_init: conversations, the inbound message ledger (inbox) and the
-- outbound reply queue (outbox).
--
-- Conventions for every table in this schema:
--   * timestamps are INTEGER Unix milliseconds (UTC);
--   * ids are UUID strings chosen by the bridge (or by the CLI for approvals);
--   * tables whose rows are replayed in order carry `seq`, an AUTOINCREMENT
--     key that fixes insertion order even when two rows share a millisecond;
--   * optional text is '' rather than NULL, so Go reads plain strings.

CREATE TABLE conversations (
    id              TEXT    PRIMARY KEY NOT NULL,
    bot             TEXT    NOT NULL,
    channel         TEXT    NOT NULL,
    thread          TEXT    NOT NULL DEFAULT '',
    agent           TEXT    NOT NULL,
    session_id      TEXT    NOT NULL DEFAULT '', -- Claude Code session id, '' until the first spawn
    owner_user_id   TEXT    NOT NULL DEFAULT '', -- who started the conversation
    model           TEXT    NOT NULL DEFAULT '', -- !model override, '' = profile default
    permission_mode TEXT    NOT NULL DEFAULT '', -- !mode override, '' = profile default
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL,
    last_active_at  INTEGER NOT NULL,
    UNIQUE (bot, channel, thread)
);

-- The inbox ledger: every accepted inbound message, written before the
-- platform is acknowledged. `id` doubles as the stream-json user message uuid.
CREATE TABLE inbox (
    seq             INTEGER PRIMARY KEY AUTOINCREMENT,
    id              TEXT    NOT NULL UNIQUE,
    conversation_id TEXT    NOT NULL REFERENCES conversations (id),
    bot             TEXT    NOT NULL,
    platform_msg_id TEXT    NOT NULL,
    user_id         TEXT    NOT NULL DEFAULT '',
    user_name       TEXT    NOT NULL DEFAULT '',
    text            TEXT    NOT NULL DEFAULT '',
    files           BLOB,                        -- opaque JSON owned by the caller
    state           TEXT    NOT NULL DEFAULT 'pending'
                    CHECK (state IN ('pending', 'sent', 'started', 'completed', 'cancelled', 'failed')),
    attempts        INTEGER NOT NULL DEFAULT 0,  -- redeliveries after a crash
    error           TEXT    NOT NULL DEFAULT '',
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL,
    UNIQUE (bot, platform_msg_id)
);
CREATE INDEX inbox_conversation_state ON inbox (conversation_id, state, seq);
CREATE INDEX inbox_state ON inbox (state, conversation_id);

-- The outbox: final replies, stored before posting so a crash between the
-- agent's result and the platform post loses nothing.
CREATE TABLE outbox (
    seq             INTEGER PRIMARY KEY AUTOINCREMENT,
    id              TEXT    NOT NULL UNIQUE,
    conversation_id TEXT    NOT NULL REFERENCES conversations (id),
    bot             TEXT    NOT NULL,
    channel         TEXT    NOT NULL,
    thread          TEXT    NOT NULL DEFAULT '',
    text            TEXT    NOT NULL,
    state           TEXT    NOT NULL DEFAULT 'pending'
                    CHECK (state IN ('pending', 'posted', 'failed')),
    attempts        INTEGER NOT NULL DEFAULT 0,  -- failed post attempts
    last_error      TEXT    NOT NULL DEFAULT '',
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL
);
CREATE INDEX outbox_state ON outbox (state, conversation_id, seq);
