-- 0021_open_streams (PostgreSQL): the message a running turn streams into,
-- for whoever answers next to close it. See ../0021_open_streams.sql.
CREATE TABLE open_streams (
    conversation_id TEXT    PRIMARY KEY NOT NULL,
    channel         TEXT    NOT NULL,
    thread          TEXT    NOT NULL,
    message_id      TEXT    NOT NULL,
    started_at      BIGINT  NOT NULL
);
