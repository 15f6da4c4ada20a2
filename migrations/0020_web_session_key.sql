-- 0020_web_session_key: the key that signs the web console's session
-- cookies, shared by every replica of one database (config replicas), so
-- that a person signed in on one replica is signed in on all of them.
--
-- At most one row (id 1). The first replica to start stores its candidate:
-- the key file of its data_dir (web-session.key) when it has one, so that
-- replicas an operator gave the same file keep their sessions, else 32
-- random bytes. It is written with INSERT … ON CONFLICT DO NOTHING and read
-- back, so replicas starting at once agree, and never changed by the bridge.
-- A single bridge (no replicas) keeps its key in data_dir and leaves the
-- table empty. Deleting the row (and the key files) signs everybody out
-- once the replicas restart. The key is a secret: it is never logged.
CREATE TABLE web_session_key (
    id         INTEGER PRIMARY KEY CHECK (id = 1),
    secret     BLOB    NOT NULL CHECK (length(secret) >= 32),
    created_at INTEGER NOT NULL
);
