package handoff

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core/access"
	"github.com/agentbridge/agentbridge/store"
)

// maxInput bounds the JSON body of send and decide.
const maxInput = 1 << 20

// announceTimeout bounds posting an attach or detach notice.
const announceTimeout = 10 * time.Second

// attach serves GET attach?conversation=ID: a server-sent event stream of
// what the conversation shows (Event), opened with EventAttached, until
// the terminal goes away or the bridge stops. The conversation is told
// when the terminal attaches and detaches.
func (s *Server) attach(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	p, err := s.authenticate(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	conv, p, err := s.conversation(ctx, p, r.URL.Query().Get("conversation"), access.Attach)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	fl, ok := w.(http.Flusher)
	if !ok {
		s.fail(w, r, fmt.Errorf("attach: the response cannot stream"))
		return
	}
	key := bridges.ConversationKey(conv.Key)
	a := &attachment{id: uuid.NewString(), key: key, convID: conv.ID, person: p.user.Name, userID: p.userID,
		who: s.person(p), events: make(chan Event, eventBuffer)}
	if !s.startStream() {
		s.fail(w, r, refuse(http.StatusServiceUnavailable, "the bridge is stopping"))
		return
	}
	defer s.streams.Done()
	if err := s.audit(ctx, store.HandoffAttach); err != nil {
		s.fail(w, r, err)
		return
	}
	s.opts.Hub.add(a)
	defer s.opts.Hub.remove(a)
	s.announce(key, "🖥️ "+p.user.Name+" attached a terminal to this conversation (`bridge attach`): what they type there comes from them, and they see the agent's answers and cards.")
	defer func() {
		s.auditAfter(ctx, store.HandoffDetach)
		s.announce(key, "🖥️ "+p.user.Name+"'s terminal detached.")
	}()

	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	where := fmt.Sprintf("attached to conversation %s (%s) as %s; session %s", conv.ID, key, p.userID, orNone(conv.SessionID))
	if err := writeEvent(w, Event{Type: EventAttached, Attach: a.id, Text: where}); err != nil {
		return
	}
	fl.Flush()
	s.stream(ctx, w, fl, a)
}

// stream writes a's events to w until ctx ends, the server stops or the
// person may no longer attach (asked before each event, at each change
// of access and every access.RecheckEvery): then EventEnded is the last.
func (s *Server) stream(ctx context.Context, w io.Writer, fl http.Flusher, a *attachment) {
	beat := time.NewTicker(s.opts.Heartbeat)
	defer beat.Stop()
	cv := access.Conv{ID: a.convID, Key: a.key}
	ended := s.access.Watch(ctx, a.who, cv, access.Attach)
	for {
		var err error
		select {
		case <-ctx.Done():
			return
		case <-ended:
			s.endAttach(ctx, w, fl, a)
			return
		case <-s.done:
			_ = writeEvent(w, Event{Type: EventNotice, Text: "the bridge is stopping; attach again once it is back"})
			fl.Flush()
			return
		case <-beat.C:
			_, err = io.WriteString(w, ": ping\n\n")
		case ev := <-a.events:
			if !s.access.May(ctx, a.who, cv, access.Attach) {
				s.endAttach(ctx, w, fl, a)
				return
			}
			err = writeEvent(w, ev)
			if err == nil && a.takeLost() {
				err = writeEvent(w, Event{Type: EventLost, Text: "some output was dropped: the terminal read too slowly (the chat has all of it)"})
			}
		}
		if err != nil {
			return
		}
		fl.Flush()
	}
}

// endAttach tells the terminal its access ended; the stream then closes
// and the attachment is removed, so send and decide name nothing.
func (s *Server) endAttach(ctx context.Context, w io.Writer, fl http.Flusher, a *attachment) {
	if ctx.Err() != nil {
		return
	}
	s.opts.Hub.remove(a)
	s.log.InfoContext(ctx, "attach stream ended: access ended", "person", a.person, "conversation", a.convID)
	if writeEvent(w, Event{Type: EventEnded, Text: "your access to this conversation ended; the terminal is detached"}) == nil {
		fl.Flush()
	}
}

// writeEvent writes ev as one server-sent event.
func writeEvent(w io.Writer, ev Event) error {
	b, err := json.Marshal(ev)
	if err != nil {
		return fmt.Errorf("encode event: %w", err)
	}
	_, err = fmt.Fprintf(w, "data: %s\n\n", b)
	return err
}

// announce posts text into conversation key (best effort: a failure is
// logged). It runs outside the conversation's worker, like any adapter
// call from another goroutine.
func (s *Server) announce(key bridges.ConversationKey, text string) {
	pl := s.opts.Core.Platform(key.Bot)
	if pl == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), announceTimeout)
	defer cancel()
	if _, err := pl.Post(ctx, key, bridges.Message{Text: text}); err != nil {
		s.log.Warn("handoff notice not posted", "key", key, "err", err)
	}
}

// input is the body of send and decide.
type input struct {
	Attach string `json:"attach"`
	Text   string `json:"text,omitempty"`   // send
	Card   string `json:"card,omitempty"`   // decide
	Choice string `json:"choice,omitempty"` // decide
}

// attached reads the body of send or decide and returns the open
// attachment it names, which must be the requester's own.
func (s *Server) attached(w http.ResponseWriter, r *http.Request) (input, *attachment, error) {
	p, err := s.authenticate(r)
	if err != nil {
		return input{}, nil, err
	}
	var in input
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxInput)).Decode(&in); err != nil {
		return in, nil, refuse(http.StatusBadRequest, "bad request body: %v", err)
	}
	a := s.opts.Hub.get(in.Attach)
	if a == nil || a.person != p.user.Name {
		return in, nil, refuse(http.StatusNotFound, "not attached (attach again)")
	}
	return in, a, nil
}

// mayNow asks the access decision whether a's person may still act
// (Write for send, Decide for decide) in a's conversation.
func (s *Server) mayNow(ctx context.Context, a *attachment, act access.Action) error {
	d, err := s.access.Decide(ctx, a.who, access.Conv{ID: a.convID, Key: a.key}, act)
	if err != nil {
		return fmt.Errorf("decide access to %s: %w", a.convID, err)
	}
	if !d.Allowed {
		s.log.WarnContext(ctx, "handoff refused: no access now", "person", a.person, "conversation", a.convID, "action", act, "why", d.Why)
		return refuse(http.StatusForbidden, "%s may not %s in conversation %s now", a.person, act, a.convID)
	}
	return nil
}

// send serves POST send {attach, text}: text becomes a message of the
// attached person in the conversation, exactly as if they wrote it there
// (a chat command included, with their rights).
func (s *Server) send(w http.ResponseWriter, r *http.Request) {
	in, a, err := s.attached(w, r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if err := s.mayNow(r.Context(), a, access.Write); err != nil {
		s.fail(w, r, err)
		return
	}
	if strings.TrimSpace(in.Text) == "" {
		s.fail(w, r, refuse(http.StatusBadRequest, "nothing to send"))
		return
	}
	m := bridges.Inbound{Key: a.key, MsgID: "handoff-" + uuid.NewString(), UserID: a.userID, UserName: a.person,
		Text: in.Text, At: time.Now()}
	a.noteSent(m.MsgID)
	if err := s.opts.Core.HandleMessage(r.Context(), m); err != nil {
		s.fail(w, r, fmt.Errorf("submit a terminal message to %s: %w", a.convID, err))
		return
	}
	w.WriteHeader(http.StatusAccepted)
}

// decide serves POST decide {attach, card, choice}: a click on card's
// button choice by the attached person. The core decides whether they may
// (as for a click in chat); the first decision wins, and a refusal comes
// back to this terminal only (EventPrivate).
func (s *Server) decide(w http.ResponseWriter, r *http.Request) {
	in, a, err := s.attached(w, r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if err := s.mayNow(r.Context(), a, access.Decide); err != nil {
		s.fail(w, r, err)
		return
	}
	act := bridges.Action{Key: a.key, CardID: in.Card, Choice: in.Choice, UserID: a.userID, UserName: a.person,
		Reply: func(_ context.Context, text string) error {
			a.push(Event{Type: EventPrivate, Text: text})
			return nil
		}}
	if err := s.opts.Core.HandleAction(r.Context(), act); err != nil {
		s.fail(w, r, fmt.Errorf("decide card %s of %s: %w", in.Card, a.convID, err))
		return
	}
	w.WriteHeader(http.StatusAccepted)
}

// orNone is s, or "none yet".
func orNone(s string) string {
	if s == "" {
		return "none yet"
	}
	return s
}
