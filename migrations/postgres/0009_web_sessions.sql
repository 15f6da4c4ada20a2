-- 0009_web_sessions (PostgreSQL): web console sessions kept on the server.
-- See ../0009_web_sessions.sql. "user" is a reserved word in PostgreSQL:
-- the statements quote it (which SQLite accepts too).
CREATE TABLE web_sessions (
    id         BYTEA   PRIMARY KEY NOT NULL,
    "user"     TEXT    NOT NULL,
    token_fp   BYTEA   NOT NULL,
    created_at BIGINT  NOT NULL,
    expires_at BIGINT  NOT NULL
);
CREATE INDEX web_sessions_user ON web_sessions ("user", created_at);
CREATE INDEX web_sessions_expires ON web_sessions (expires_at);
