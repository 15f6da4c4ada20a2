package screen

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
// CutNote before anything else (CloseCutStream), so that no message stays
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
func (s *Screen) keysLive() bool {
	_, closes := s.platform.(bridges.StreamCloser)
	_, streams := s.platform.(bridges.Streamer)
	return closes && !streams
}

// LiveBecomesReply notes, through st (the store the reply is written
// with), in the record of the turn's live message ref that it is to
// become the reply reply (see above).
func (s *Screen) LiveBecomesReply(ctx context.Context, st *store.Store, ref bridges.MessageRef, reply string) {
	if s.streamRec == "" || s.streamRec != ref.ID {
		return
	}
	err := st.PutOpenStream(ctx, store.OpenStream{ConversationID: s.id, Channel: ref.Key.Channel, Thread: ref.Key.Thread, MessageID: ref.ID, ReplyID: reply})
	if err != nil && !s.w.Fenced(err) {
		s.log.Warn("record that the live message becomes the reply (a holder dying inside that edit would leave it to be posted again)", "err", err)
	}
}

// CutNote ends a stream its turn left open.
const CutNote = "\n\n_(interrupted — continued below)_"

// recordStream notes that the running turn streams into ref.
func (s *Screen) recordStream(ctx context.Context, ref bridges.MessageRef) {
	if _, ok := s.platform.(bridges.StreamCloser); !ok {
		return
	}
	err := s.st.PutOpenStream(ctx, store.OpenStream{ConversationID: s.id, Channel: ref.Key.Channel, Thread: ref.Key.Thread, MessageID: ref.ID})
	switch {
	case err == nil:
		s.streamRec = ref.ID
	case s.w.Fenced(err):
	default:
		s.log.Warn("record the turn's stream (a cut stream would stay open)", "err", err)
	}
}

// ForgetStream drops the record of the turn's stream once it is stopped;
// not while retrying, when the outbox still has to stop it with the reply.
func (s *Screen) ForgetStream(ctx context.Context, retrying bool) {
	if s.streamRec == "" || retrying {
		return
	}
	if err := s.st.DeleteOpenStream(ctx, s.id, s.streamRec); err != nil && !s.w.Fenced(err) {
		s.log.Warn("forget the turn's stream", "err", err)
		return
	}
	s.streamRec = ""
}

// CloseCutStream closes the stream an earlier turn left open, if the
// store records one that is not this worker's own. When that live message
// was being edited into the reply replyID, it is not closed: it returns
// replyID and the message, for the outbox to make that edit (again)
// rather than post the reply beside it.
func (s *Screen) CloseCutStream(ctx context.Context) (replyID string, into bridges.MessageRef) {
	closer, ok := s.platform.(bridges.StreamCloser)
	if !ok || !s.w.MayPost() {
		return "", bridges.MessageRef{}
	}
	os, err := s.st.OpenStreamOf(ctx, s.id)
	if errors.Is(err, store.ErrNotFound) {
		return "", bridges.MessageRef{}
	}
	if err != nil {
		s.log.Warn("read the conversation's open stream", "err", err)
		return "", bridges.MessageRef{}
	}
	if os.MessageID == s.streamRec {
		return "", bridges.MessageRef{} // this worker's own stream: it stops it
	}
	key := s.key
	key.Channel = os.Channel
	ref := bridges.MessageRef{Key: key, ID: os.MessageID}
	if os.ReplyID != "" {
		s.streamRec = os.MessageID // forgotten once the reply is shown
		return os.ReplyID, ref
	}
	if err := closer.CloseStream(ctx, ref, CutNote); err != nil {
		s.log.Warn("close the stream an interrupted turn left open", "msg_id", os.MessageID, "err", err)
		if !bridges.IsPermanent(err) {
			return "", bridges.MessageRef{} // kept: the next holder or run tries again
		}
	} else {
		s.log.Info("closed the stream an interrupted turn left open", "msg_id", os.MessageID)
	}
	if err := s.st.DeleteOpenStream(ctx, s.id, os.MessageID); err != nil && !s.w.Fenced(err) {
		s.log.Warn("forget the closed stream", "err", err)
	}
	return "", bridges.MessageRef{}
}
