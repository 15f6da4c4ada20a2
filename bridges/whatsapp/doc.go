// Package whatsapp is the WhatsApp side of the bridge, built on
// go.mau.fi/whatsmeow: the bot is a linked device of a phone's account.
//
// This package holds the seam in front of the library and the device
// lifecycle: the narrow client interface (waClient) the rest of the
// package talks to, the per-bot device store (OpenDeviceStore), the log
// adapter (Logger), linking a device (Link) and the start-up check that a
// bot is linked (CheckLinked). The message adapter (conversations,
// replies, approvals) is built on waClient.
package whatsapp
