package discordfake

// replyLocked makes m a reply to the message ref names, as Discord does:
// type 19 with message_reference, and referenced_message when that message
// exists in the channel (with fail_if_not_exists false a missing one
// leaves a plain message). f.mu is held.
func (f *Fake) replyLocked(m *message, ref *wireMessageRef) {
	if ref == nil || ref.MessageID == "" {
		return
	}
	q, ok := f.messages[ref.MessageID]
	if !ok || q.wire.ChannelID != m.wire.ChannelID {
		return
	}
	m.wire.Type = 19
	m.wire.MessageReference = &wireMessageRef{MessageID: ref.MessageID, ChannelID: m.wire.ChannelID, GuildID: m.wire.GuildID}
	quoted := q.wire
	quoted.ReferencedMessage = nil // Discord does not nest them
	m.wire.ReferencedMessage = &quoted
}
