package core

import (
	"context"
	"errors"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/store"
)

// A turn streamed natively (bridges.Streamer) records its stream's message
// in the store when the stream starts (store.OpenStream) and forgets it
// when the turn ends with the stream stopped. A turn cut off — its bridge
// killed, its replica dead or paused past its lease — leaves the record:
// whoever answers the conversation next (the restarted bridge's recovery,
// or the replica that takes the conversation) closes that stream with
// cutNote before anything else (closeCutStream), so that no message stays
// half-written and open; the interrupted message is then answered below.

// cutNote ends a stream its turn left open.
const cutNote = "\n\n_(interrupted — continued below)_"

// recordStream notes that the running turn streams into ref.
func (cv *conversation) recordStream(ctx context.Context, ref bridges.MessageRef) {
	if _, ok := cv.platform.(bridges.StreamCloser); !ok {
		return
	}
	err := cv.st.PutOpenStream(ctx, store.OpenStream{ConversationID: cv.id, Channel: ref.Key.Channel, Thread: ref.Key.Thread, MessageID: ref.ID})
	switch {
	case err == nil:
		cv.streamRec = ref.ID
	case cv.fenced(err):
	default:
		cv.log.Warn("record the turn's stream (a cut stream would stay open)", "err", err)
	}
}

// forgetStream drops the record of the turn's stream once it is stopped:
// not while the outbox still has to stop it with the reply (a retry).
func (cv *conversation) forgetStream(ctx context.Context) {
	if cv.streamRec == "" || cv.outbox.Retrying() {
		return
	}
	if err := cv.st.DeleteOpenStream(ctx, cv.id, cv.streamRec); err != nil && !cv.fenced(err) {
		cv.log.Warn("forget the turn's stream", "err", err)
		return
	}
	cv.streamRec = ""
}

// closeCutStream closes the stream an earlier turn left open, if the
// store records one that is not this worker's own.
func (cv *conversation) closeCutStream(ctx context.Context) {
	closer, ok := cv.platform.(bridges.StreamCloser)
	if !ok || !cv.mayPost() {
		return
	}
	os, err := cv.st.OpenStreamOf(ctx, cv.id)
	if errors.Is(err, store.ErrNotFound) {
		return
	}
	if err != nil {
		cv.log.Warn("read the conversation's open stream", "err", err)
		return
	}
	if os.MessageID == cv.streamRec {
		return // this worker's own stream: it stops it
	}
	key := cv.key
	key.Channel = os.Channel
	ref := bridges.MessageRef{Key: key, ID: os.MessageID}
	if err := closer.CloseStream(ctx, ref, cutNote); err != nil {
		cv.log.Warn("close the stream an interrupted turn left open", "msg_id", os.MessageID, "err", err)
		if !bridges.IsPermanent(err) {
			return // kept: the next holder or run tries again
		}
	} else {
		cv.log.Info("closed the stream an interrupted turn left open", "msg_id", os.MessageID)
	}
	if err := cv.st.DeleteOpenStream(ctx, cv.id, os.MessageID); err != nil && !cv.fenced(err) {
		cv.log.Warn("forget the closed stream", "err", err)
	}
}
