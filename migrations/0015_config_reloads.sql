-- 0015_config_reloads: the audit log of config reloads.
--
-- One row per reload attempt of the running bridge (SIGHUP, a changed file,
-- `bridge reload`): applied ones with the generation they made, refused
-- ones with their problems.
--   via        what asked for it: signal, signal -now, file
--   generation the config generation it made; 0 when refused
--   changed    newline-separated config key paths (never values: no secret)
--   problems   newline-separated problem lines, each with its line number
--   at         Unix ms
CREATE TABLE config_reloads (
    seq        INTEGER PRIMARY KEY AUTOINCREMENT,
    at         INTEGER NOT NULL,
    via        TEXT    NOT NULL,
    generation INTEGER NOT NULL DEFAULT 0,
    applied    BOOLEAN NOT NULL,
    changed    TEXT    NOT NULL DEFAULT '',
    problems   TEXT    NOT NULL DEFAULT ''
);
