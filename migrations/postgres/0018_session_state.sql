-- 0018_session_state (PostgreSQL): the agent CLI's session files, kept in
-- the database for another replica's resume. See ../0018_session_state.sql.
CREATE TABLE session_states (
    session_id      TEXT    PRIMARY KEY NOT NULL,
    conversation_id TEXT    NOT NULL,
    data            BYTEA   NOT NULL,
    size            BIGINT  NOT NULL,
    updated_at      BIGINT  NOT NULL
);
CREATE INDEX session_states_conversation ON session_states (conversation_id);
