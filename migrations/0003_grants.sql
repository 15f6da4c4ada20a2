-- 0003_grants: "Always allow" grants, scoped to one conversation.
--
-- A click on "Always allow" stores one row per rule the CLI suggested. The
-- bridge allows later requests of the same conversation that match an active
-- grant without a card; the CLI itself only ever receives the rule for its
-- running session, so nothing is written to the workspace's settings files.
-- Rows are never deleted by the bridge: removal (`!rules rm N`) stamps
-- removed_at / removed_by, so the table doubles as the grants' audit log.
CREATE TABLE grants (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    conversation_id TEXT    NOT NULL REFERENCES conversations (id),
    num             INTEGER NOT NULL,            -- 1, 2, 3 … per conversation; what `!rules` shows
    tool            TEXT    NOT NULL,            -- tool name, e.g. Bash
    pattern         TEXT    NOT NULL DEFAULT '', -- the rule's match glob; '' = any subject
    granted_by      TEXT    NOT NULL DEFAULT '', -- user who clicked "Always allow"
    approval_id     TEXT    NOT NULL DEFAULT '', -- the approvals row of that click
    created_at      INTEGER NOT NULL,
    removed_at      INTEGER,                     -- NULL while active
    removed_by      TEXT    NOT NULL DEFAULT '',
    UNIQUE (conversation_id, num)
);
CREATE INDEX grants_active ON grants (conversation_id, removed_at, num);
