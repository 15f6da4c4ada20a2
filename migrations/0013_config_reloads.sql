-- 0013_config_reloads: the audit log of config reloads.
--
-- One row per reload attempt of the running bridge (SIGHUP, a changed file,
-- `bridge reload`): applied ones with the generation they made, refused
-- ones with their problems. changed and problems are newline-separated
-- lists of config key paths and problem lines: never values, so no secret
-- is stored. at is Unix ms.
CREATE TABLE config_reloads (
	id         INTEGER PRIMARY KEY AUTOINCREMENT,
	at         INTEGER NOT NULL,
	trigger    TEXT NOT NULL,
	generation INTEGER NOT NULL DEFAULT 0, -- 0: refused
	applied    INTEGER NOT NULL,
	changed    TEXT NOT NULL DEFAULT '',
	problems   TEXT NOT NULL DEFAULT ''
);
