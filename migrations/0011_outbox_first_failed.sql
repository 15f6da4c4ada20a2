-- 0011_outbox_first_failed: when a reply's first post attempt failed.
--
-- A reply now waits out a platform outage (transient errors keep it pending
-- until it is older than config delivery.give_up_after) instead of failing
-- after a fixed number of attempts. first_failed_at (Unix ms; 0 = no attempt
-- failed) is when the outage began for it: a reply delivered late says how
-- long it waited. Replies stored before this migration get 0.
ALTER TABLE outbox ADD COLUMN first_failed_at INTEGER NOT NULL DEFAULT 0;
