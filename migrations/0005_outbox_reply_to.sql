-- 0005_outbox_reply_to: the message a reply quotes.
--
-- reply_to is the platform id of the inbound message that a reply answers
-- (bridges.Message.ReplyTo): platforms that can quote (WhatsApp) show the
-- first part of an answer as a reply to the user's message. '' = no quote,
-- which is also what replies stored before this migration get.
ALTER TABLE outbox ADD COLUMN reply_to TEXT NOT NULL DEFAULT '';
