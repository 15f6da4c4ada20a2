-- 0002_approvals_usage: the permission audit log (approvals) and per-result
-- accounting (usage).

-- Every tool-permission request and its decision. A row with decided_at NULL
-- is open (its card still shows buttons); rule-based answers are recorded too.
CREATE TABLE approvals (
    seq             INTEGER PRIMARY KEY AUTOINCREMENT,
    id              TEXT    NOT NULL UNIQUE,     -- the CLI's can_use_tool request_id
    conversation_id TEXT    NOT NULL REFERENCES conversations (id),
    tool_name       TEXT    NOT NULL,
    input           BLOB,                        -- tool input JSON as received
    requested_by    TEXT    NOT NULL DEFAULT '', -- user whose message started the turn
    card_ref        TEXT    NOT NULL DEFAULT '', -- opaque platform reference of the card
    decision        TEXT    NOT NULL DEFAULT '', -- allow|always|deny|timeout|cancelled|rule-allow|rule-deny|expired|…
    decided_by      TEXT    NOT NULL DEFAULT '',
    message         TEXT    NOT NULL DEFAULT '',
    requested_at    INTEGER NOT NULL,
    decided_at      INTEGER                      -- NULL while open
);
CREATE INDEX approvals_open ON approvals (decided_at, seq);
CREATE INDEX approvals_conversation ON approvals (conversation_id, seq);

-- One row per agent `result` event.
CREATE TABLE usage (
    seq                   INTEGER PRIMARY KEY AUTOINCREMENT,
    conversation_id       TEXT    NOT NULL REFERENCES conversations (id),
    session_id            TEXT    NOT NULL DEFAULT '',
    cost_usd              REAL    NOT NULL DEFAULT 0,
    input_tokens          INTEGER NOT NULL DEFAULT 0,
    output_tokens         INTEGER NOT NULL DEFAULT 0,
    cache_read_tokens     INTEGER NOT NULL DEFAULT 0,
    cache_creation_tokens INTEGER NOT NULL DEFAULT 0,
    duration_ms           INTEGER NOT NULL DEFAULT 0,
    num_turns             INTEGER NOT NULL DEFAULT 0,
    is_error              INTEGER NOT NULL DEFAULT 0 CHECK (is_error IN (0, 1)),
    created_at            INTEGER NOT NULL
);
CREATE INDEX usage_conversation ON usage (conversation_id);
