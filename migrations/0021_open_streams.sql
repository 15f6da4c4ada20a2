-- 0021_open_streams: the message a conversation's running turn streams
-- into (Slack chat.startStream), recorded when the stream starts, so that
-- whoever answers the conversation next — the restarted bridge, or the
-- replica that takes it when its holder dies — can close a stream that was
-- cut off half-written. At most one row per conversation (the latest
-- stream); a stream already ended is closed again harmlessly.
CREATE TABLE open_streams (
    conversation_id TEXT    PRIMARY KEY NOT NULL,
    channel         TEXT    NOT NULL,
    thread          TEXT    NOT NULL,
    message_id      TEXT    NOT NULL,
    started_at      INTEGER NOT NULL
);
