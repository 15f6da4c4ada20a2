-- 0019_handoff_audit: the audit log of chat ↔ terminal hand-off (`bridge
-- attach`, `export`, `import`; bridges/handoff). One row per event:
--   action           attach, detach, export, import, or refused
--   request          what was asked (attach, export, import, send, decide)
--   person           the handoff.users name; '' when the token was missing
--                    or unknown
--   user_id          the platform user id config maps them to on the bot
--   conversation_id  the conversation ('' when unknown); no foreign key:
--                    a refusal may name none, and the audit outlives it
--   bot, channel, thread  where it is
--   reason           why it was refused ('' otherwise); never a token
--   remote           the client's address
--   at               Unix ms
-- Pruned with the other history (at before the retention cut-off).
CREATE TABLE handoff_audit (
    seq             INTEGER PRIMARY KEY AUTOINCREMENT,
    at              INTEGER NOT NULL,
    action          TEXT    NOT NULL CHECK (action IN ('attach', 'detach', 'export', 'import', 'refused')),
    request         TEXT    NOT NULL,
    person          TEXT    NOT NULL DEFAULT '',
    user_id         TEXT    NOT NULL DEFAULT '',
    conversation_id TEXT    NOT NULL DEFAULT '',
    bot             TEXT    NOT NULL DEFAULT '',
    channel         TEXT    NOT NULL DEFAULT '',
    thread          TEXT    NOT NULL DEFAULT '',
    reason          TEXT    NOT NULL DEFAULT '',
    remote          TEXT    NOT NULL DEFAULT ''
);
CREATE INDEX handoff_audit_at ON handoff_audit (at);
