package bridges

// MessageCounter is implemented by the Handler a platform's Run gets: it
// counts an inbound message the adapter could not hand to the core (for
// example "undecryptable") in the core's messages metric, under the bot
// whose Run got the handler.
type MessageCounter interface {
	CountMessage(outcome string)
}

// CountMessage counts an inbound message with outcome through h when h
// accepts counts (the core's handler does; test stubs need not).
func CountMessage(h Handler, outcome string) {
	if c, ok := h.(MessageCounter); ok {
		c.CountMessage(outcome)
	}
}
