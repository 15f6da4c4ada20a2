// Package whatsapp is the WhatsApp side of the bridge, built on
// go.mau.fi/whatsmeow: the bot is a linked device of a phone's account.
//
// The device lifecycle: the narrow client interface (waClient) the rest
// of the package talks to, the per-bot device store (OpenDeviceStore),
// the log adapter (Logger), linking a device (Link) and the start-up
// check that a bot is linked (CheckLinked).
//
// The message adapter (Bridge, made by Open over a real client or by New
// over any waClient) implements bridges.Platform, Typer and FileFetcher:
// inbound.go turns *events.Message into Inbound messages and card answers
// (private chats; groups only when the bot is mentioned or quoted; LIDs
// mapped to phone numbers before the access check; strangers cause no
// side effect at all), outbound.go posts rendered (format.go) and split
// (split.go) answers quoting the user's message, safety.go refuses to
// write to a chat that never wrote to the bot, typing.go shows
// "composing", files.go downloads media, run.go connects, reports the
// connection state (bridges.ReportState) and ends with a bridges.Failure
// saying what to do on permanent disconnects. WhatsApp has no buttons for
// normal accounts (cards.go): the core gives a card's choices as
// Message.Buttons, which are listed as numbered choices with fixed
// meanings (1 Allow, 2 Deny, 3 Always allow) and answered by a number (the
// core decides the card the reply quotes, found in its store even after a
// restart, or its newest card), a 👍 / 👎 reaction on the card, or
// (approvals: poll) a vote in a poll.
package whatsapp
