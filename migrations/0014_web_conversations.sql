-- 0014_web_conversations: managing web conversations (title, archive,
-- deletion, sharing), full-text search over their messages, and their tool
-- calls in full.
--
-- web_threads has one row per web conversation: its owner (the web user
-- who started it, web_messages.channel), its title (the first message
-- shortened, or what the owner renamed it to), whether it is archived, and
-- a tombstone once deleted (its messages, uploads and shares are removed at
-- once; the row keeps the thread id from being reused). Thread ids are
-- random and unique per bot, so (bot, thread) names a conversation for a
-- viewer who is not its owner. Existing conversations are backfilled.
CREATE TABLE web_threads (
    bot        TEXT    NOT NULL,
    thread     TEXT    NOT NULL,
    owner      TEXT    NOT NULL,
    title      TEXT    NOT NULL DEFAULT '',
    archived   INTEGER NOT NULL DEFAULT 0,
    deleted    INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (bot, thread)
);
CREATE INDEX web_threads_owner ON web_threads (bot, owner);
INSERT OR IGNORE INTO web_threads (bot, thread, owner, title, created_at, updated_at)
    SELECT bot, thread, channel, '', MIN(created_at), MAX(updated_at)
    FROM web_messages GROUP BY bot, channel, thread;

-- web_shares names the teammates a conversation is shared with and their
-- role there: 'viewer' (reads it live; decides cards only as the bot's
-- access lets them) or 'participant' (also writes to the agent).
CREATE TABLE web_shares (
    bot        TEXT    NOT NULL,
    thread     TEXT    NOT NULL,
    member     TEXT    NOT NULL,
    role       TEXT    NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (bot, thread, member)
);
CREATE INDEX web_shares_member ON web_shares (bot, member);

-- web_messages_fts indexes the text of every web message (docid = seq).
-- FTS4, not FTS5: go-sqlite3 compiles FTS3/4 in by default, while FTS5
-- needs the sqlite_fts5 build tag on every build of the bridge and its
-- tests. The triggers keep the index equal to web_messages.
CREATE VIRTUAL TABLE web_messages_fts USING fts4(content="web_messages", text, tokenize=unicode61);
CREATE TRIGGER web_messages_fts_bu BEFORE UPDATE OF text ON web_messages BEGIN
    DELETE FROM web_messages_fts WHERE docid = old.seq;
END;
CREATE TRIGGER web_messages_fts_au AFTER UPDATE OF text ON web_messages BEGIN
    INSERT INTO web_messages_fts (docid, text) VALUES (new.seq, new.text);
END;
CREATE TRIGGER web_messages_fts_bd BEFORE DELETE ON web_messages BEGIN
    DELETE FROM web_messages_fts WHERE docid = old.seq;
END;
CREATE TRIGGER web_messages_fts_ai AFTER INSERT ON web_messages BEGIN
    INSERT INTO web_messages_fts (docid, text) VALUES (new.seq, new.text);
END;
INSERT INTO web_messages_fts (web_messages_fts) VALUES ('rebuild');

-- web_tools keeps each tool call of a web conversation in full (input as
-- JSON, output as text), which its tool line expands to on request.
CREATE TABLE web_tools (
    bot        TEXT    NOT NULL,
    channel    TEXT    NOT NULL,
    thread     TEXT    NOT NULL,
    id         TEXT    NOT NULL,
    name       TEXT    NOT NULL,
    input      TEXT    NOT NULL,
    output     TEXT    NOT NULL DEFAULT '',
    is_error   INTEGER NOT NULL DEFAULT 0,
    done       INTEGER NOT NULL DEFAULT 0,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (bot, thread, id)
);
CREATE INDEX web_tools_updated ON web_tools (updated_at);
