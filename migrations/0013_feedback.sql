-- 0013_feedback: 👍/👎 ratings of the agent's answers (feedback buttons
-- under a streamed answer). One row per answer and person: a second click
-- replaces the first.
--   reply_id   the outbox id of the rated answer (the turn's reply)
--   rating     'good' or 'bad'
-- Pruned with the other history (updated_at before the retention cut-off).
CREATE TABLE feedback (
    seq             INTEGER PRIMARY KEY AUTOINCREMENT,
    reply_id        TEXT    NOT NULL,
    conversation_id TEXT    NOT NULL REFERENCES conversations (id),
    user_id         TEXT    NOT NULL,
    rating          TEXT    NOT NULL CHECK (rating IN ('good', 'bad')),
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL,
    UNIQUE (reply_id, user_id)
);
CREATE INDEX feedback_updated ON feedback (updated_at);
