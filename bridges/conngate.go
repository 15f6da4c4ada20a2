package bridges

import "context"

// ConnGate decides when this process may hold a bot's connection to its
// platform. Several replicas of the bridge can serve one bot, but some
// platforms allow one connection per bot only: Discord delivers every
// event to every gateway session of a token (two replicas would answer
// everything twice), and WhatsApp lets one client use a linked device at a
// time (a second replaces the first, and WhatsApp ends by logging the
// device out). A gate lets exactly one replica connect at a time.
//
// The adapter keeps everything else — its handlers, its ordered inbound
// queue, Post and Edit (which need no connection of their own) — and runs
// only its connect-and-receive loop through Hold.
type ConnGate interface {
	// Hold calls connect while this replica holds the connection, with a
	// context that ends as soon as it stops holding it: when the replica
	// loses the right (its lease could not be renewed in time, or another
	// replica took it), or when ctx ends. connect must then disconnect
	// before it returns: the next holder connects next. After a loss Hold
	// waits until it may connect again and calls connect again, so
	// connect must be callable more than once. While it waits it reports
	// ConnStandby through h (a StateReporter), naming the holder.
	//
	// Hold returns nil when ctx ends, and connect's error when connect
	// returns while still holding (a permanent failure); it gives the
	// connection up (to the other replicas, at once) before returning.
	Hold(ctx context.Context, h Handler, connect func(ctx context.Context) error) error
}

// ConnGated is an optional ability of an adapter whose platform allows one
// connection per bot: the bridge gives it a ConnGate when it runs as one
// of several replicas. Call SetConnGate before Run; without a gate the
// adapter connects as soon as Run starts (one bridge process).
type ConnGated interface {
	SetConnGate(g ConnGate)
}
