-- 0020_web_session_key (PostgreSQL): the web console's cookie signing key
-- shared by every replica. See ../0020_web_session_key.sql.
CREATE TABLE web_session_key (
    id         BIGINT   PRIMARY KEY CHECK (id = 1),
    secret     BYTEA    NOT NULL CHECK (octet_length(secret) >= 32),
    created_at BIGINT   NOT NULL
);
