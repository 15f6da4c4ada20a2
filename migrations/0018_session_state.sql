-- 0018_session_state: the agent CLI's session files, kept in the database
-- so that another replica can resume a session without a shared
-- filesystem. One row per session id, replaced at the end of each turn.
--   data        a gzip'd tar of the session's files under its CLI config
--               dir (projects/<cwd>/<session>.jsonl and the like)
--   size        len(data), for the operator
--   updated_at  Unix ms
-- See store/session_state.go.
CREATE TABLE session_states (
    session_id      TEXT    PRIMARY KEY NOT NULL,
    conversation_id TEXT    NOT NULL,
    data            BLOB    NOT NULL,
    size            INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL
);
CREATE INDEX session_states_conversation ON session_states (conversation_id);
