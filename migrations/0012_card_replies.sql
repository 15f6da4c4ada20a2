-- 0012_card_replies: what a reply quotes: a card (resolved from the store)
-- or a message whose text the agent gets, marked as quoted.
--
-- On platforms without buttons (WhatsApp) a card is answered by a reply
-- quoting it ("1", "no"). The adapter's memory of the messages it sent is
-- bounded and empty after a restart, so the quote is kept with the message
-- and the card is found by its platform message id:
--   inbox.reply_to        the platform id of the message this one quotes
--                         ('' = no quote, also for older rows);
--   inbox.quoted          the quoted message's text, for the agent ('' = none);
--   approvals.card_msg_id the platform id of the message showing the card
--                         ('' = none), filled from card_ref (JSON of the
--                         message reference, field "ID") for older cards.
ALTER TABLE inbox ADD COLUMN reply_to TEXT NOT NULL DEFAULT '';
ALTER TABLE inbox ADD COLUMN quoted TEXT NOT NULL DEFAULT '';
ALTER TABLE approvals ADD COLUMN card_msg_id TEXT NOT NULL DEFAULT '';
UPDATE approvals SET card_msg_id = COALESCE(json_extract(card_ref, '$.ID'), '')
    WHERE card_ref <> '' AND json_valid(card_ref);
CREATE INDEX approvals_card_msg ON approvals (conversation_id, card_msg_id) WHERE card_msg_id <> '';
