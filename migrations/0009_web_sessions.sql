-- 0009_web_sessions: web console sessions kept on the server.
--
-- A session cookie is signed and names a random secret; the row keyed by
-- that secret's SHA-256 must exist for the cookie to open the console, so
-- signing out (which deletes the row) ends the session for every copy of
-- the cookie. token_fp binds the session to the user's token when it was
-- issued: a session whose user's token changed is deleted at the next
-- start and refused until then. Expired rows are deleted as new sessions
-- are issued.
CREATE TABLE web_sessions (
    id         BLOB    PRIMARY KEY NOT NULL, -- SHA-256 of the cookie's secret
    user       TEXT    NOT NULL,
    token_fp   BLOB    NOT NULL,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
);
CREATE INDEX web_sessions_user ON web_sessions (user, created_at);
CREATE INDEX web_sessions_expires ON web_sessions (expires_at);
