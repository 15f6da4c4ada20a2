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

// On a platform without native streams that closes cut messages
// (StreamCloser without Streamer: Discord), the turn's live message is
// recorded the same way when it is posted (keysLive), and its first post
// carries the turn's key (Message.Live), so that a holder that runs the
// turn again after its holder died inside that post gets the message back
// and takes it over instead of posting another. When the live message is
// to become the turn's reply (an edit from the outbox), the record names
// the reply (OpenStream.ReplyID): a holder that died inside that edit
// leaves the next one to make the edit again, not to post the reply
// beside it.

// keysLive reports whether the turn's live message is keyed and recorded
// (see above).
func (cv *conversation) keysLive() bool {
	_, closes := cv.platform.(bridges.StreamCloser)
	_, streams := cv.platform.(bridges.Streamer)
	return closes && !streams
}

// liveBecomesReply notes in the record of the turn's live message ref
// that it is to become reply (see above).
func (cv *conversation) liveBecomesReply(ctx context.Context, st *store.Store, ref bridges.MessageRef, reply string) {
	if cv.streamRec == "" || cv.streamRec != ref.ID {
		return
	}
	err := st.PutOpenStream(ctx, store.OpenStream{ConversationID: cv.id, Channel: ref.Key.Channel, Thread: ref.Key.Thread, MessageID: ref.ID, ReplyID: reply})
	if err != nil && !cv.fenced(err) {
		cv.log.Warn("record that the live message becomes the reply (a holder dying inside that edit would leave it to be posted again)", "err", err)
	}
}

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
	if os.ReplyID != "" {
		// The live message was being edited into the reply: the outbox
		// makes that edit (again) rather than posting the reply beside it.
		cv.outbox.EditInstead(os.ReplyID, ref)
		cv.streamRec = os.MessageID // forgotten once the reply is shown
		return
	}
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
