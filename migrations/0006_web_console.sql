-- 0006_web_console: the web console's chat history and uploaded images.
--
-- web_messages holds every message shown in a web conversation, so that a
-- reload or a reconnect shows the conversation as it is: the user's messages
-- (author = the web user name) and the bridge's posts (author = ''), each
-- edit replacing text and buttons in place. An open card keeps its buttons
-- until the core edits it, so pending cards come back too. version is
-- global and increases with every insert and edit: a page that reconnects
-- asks for what changed after the last version it saw. buttons and files are
-- JSON owned by the web adapter. Rows are keyed by the conversation key
-- (bot, channel = the web user, thread) rather than by conversations.id:
-- the user's message is recorded before the core creates the conversation.
-- Prune removes rows not updated within the retention period.
CREATE TABLE web_messages (
    seq        INTEGER PRIMARY KEY AUTOINCREMENT, -- display order
    id         TEXT    NOT NULL UNIQUE,           -- bridges.MessageRef.ID / Inbound.MsgID
    bot        TEXT    NOT NULL,
    channel    TEXT    NOT NULL,
    thread     TEXT    NOT NULL,
    version    INTEGER NOT NULL,
    author     TEXT    NOT NULL DEFAULT '',
    text       TEXT    NOT NULL,
    card_id    TEXT    NOT NULL DEFAULT '',
    buttons    TEXT    NOT NULL DEFAULT '',
    reply_to   TEXT    NOT NULL DEFAULT '',
    files      TEXT    NOT NULL DEFAULT '',
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
);
CREATE INDEX web_messages_conversation ON web_messages (bot, channel, thread, seq);
CREATE INDEX web_messages_version ON web_messages (version);
CREATE INDEX web_messages_updated ON web_messages (updated_at);

-- web_uploads keeps an image a web user attached until the agent has it
-- (the core fetches it when the message is delivered, possibly after a
-- restart) and so that the page can show it again.
CREATE TABLE web_uploads (
    id         TEXT    PRIMARY KEY NOT NULL,
    bot        TEXT    NOT NULL,
    channel    TEXT    NOT NULL,
    thread     TEXT    NOT NULL,
    name       TEXT    NOT NULL,
    mime_type  TEXT    NOT NULL,
    size       INTEGER NOT NULL,
    data       BLOB    NOT NULL,
    created_at INTEGER NOT NULL
);
CREATE INDEX web_uploads_created ON web_uploads (created_at);
