-- 0014_web_conversations (PostgreSQL): managing web conversations (title,
-- archive, deletion, sharing), full-text search over their messages, and
-- their tool calls in full. See ../0014_web_conversations.sql.
--
-- The search index differs: where SQLite keeps an FTS4 table filled by
-- triggers, PostgreSQL indexes an expression of web_messages.text (GIN over
-- to_tsvector('simple', …)), which needs neither triggers nor a rebuild and
-- is never out of step with the table. ASCII punctuation is read as a space
-- first, so words split where SQLite's unicode61 tokenizer splits them
-- (config/example.yaml is the words config, example and yaml). The store's
-- search (webMessageSearch in store/dialect.go) uses the same expression.
CREATE TABLE web_threads (
    bot        TEXT    NOT NULL,
    thread     TEXT    NOT NULL,
    owner      TEXT    NOT NULL,
    title      TEXT    NOT NULL DEFAULT '',
    archived   BIGINT  NOT NULL DEFAULT 0,
    deleted    BIGINT  NOT NULL DEFAULT 0,
    created_at BIGINT  NOT NULL,
    updated_at BIGINT  NOT NULL,
    PRIMARY KEY (bot, thread)
);
CREATE INDEX web_threads_owner ON web_threads (bot, owner);
INSERT INTO web_threads (bot, thread, owner, title, created_at, updated_at)
    SELECT bot, thread, channel, '', MIN(created_at), MAX(updated_at)
    FROM web_messages GROUP BY bot, channel, thread
    ON CONFLICT (bot, thread) DO NOTHING;

CREATE TABLE web_shares (
    bot        TEXT    NOT NULL,
    thread     TEXT    NOT NULL,
    member     TEXT    NOT NULL,
    role       TEXT    NOT NULL,
    created_at BIGINT  NOT NULL,
    PRIMARY KEY (bot, thread, member)
);
CREATE INDEX web_shares_member ON web_shares (bot, member);

CREATE INDEX web_messages_search ON web_messages
    USING gin (to_tsvector('simple', regexp_replace(text, '[[:punct:]]+', ' ', 'g')));

CREATE TABLE web_tools (
    bot        TEXT    NOT NULL,
    channel    TEXT    NOT NULL,
    thread     TEXT    NOT NULL,
    id         TEXT    NOT NULL,
    name       TEXT    NOT NULL,
    input      TEXT    NOT NULL,
    output     TEXT    NOT NULL DEFAULT '',
    is_error   BIGINT  NOT NULL DEFAULT 0,
    done       BIGINT  NOT NULL DEFAULT 0,
    updated_at BIGINT  NOT NULL,
    PRIMARY KEY (bot, thread, id)
);
CREATE INDEX web_tools_updated ON web_tools (updated_at);
