package slackfake

import (
	"encoding/json"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// envelope is the fake's record of one Socket Mode envelope.
type envelope struct {
	Envelope
	redelivered bool // a retry was queued for it
}

// frame is one websocket text message to write; env is set for envelopes
// so that the writer can record when it went out.
type frame struct {
	data []byte
	env  *envelope
}

// wsConn is one accepted Socket Mode connection. Only its writer
// goroutine writes data frames; pings use WriteControl (safe alongside).
type wsConn struct {
	id       int
	ws       *websocket.Conn
	out      chan frame
	done     chan struct{}
	killOnce sync.Once
	retired  bool // told to disconnect: gets no new envelopes (s.mu)
}

// kill closes the TCP connection abruptly (no close frame).
func (c *wsConn) kill() {
	c.killOnce.Do(func() {
		close(c.done)
		_ = c.ws.UnderlyingConn().Close()
	})
}

// serveSocket accepts a Socket Mode websocket at /link/?ticket=….
func (s *Server) serveSocket(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	refused := s.takeRefusal(&s.refuseWS)
	if refused {
		s.calls = append(s.calls, Call{Method: "websocket", Status: http.StatusServiceUnavailable, At: time.Now()})
		s.notify()
	}
	s.mu.Unlock()
	if refused {
		http.Error(w, "503 Service Unavailable", http.StatusServiceUnavailable)
		return
	}
	ws, err := s.upgrader.Upgrade(w, r, nil)
	if err != nil {
		return // Upgrade already answered
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		_ = ws.Close()
		return
	}
	s.connCount++
	c := &wsConn{id: s.connCount, ws: ws, out: make(chan frame, 1024), done: make(chan struct{})}
	s.conns[c.id] = c
	s.wg.Add(1)
	go s.writeLoop(c)
	hello, _ := json.Marshal(map[string]any{
		"type":            "hello",
		"num_connections": len(s.conns),
		"connection_info": map[string]string{"app_id": AppID},
		"debug_info":      map[string]any{"host": "slackfake", "build_number": 1, "approximate_connection_time": 3600},
	})
	c.out <- frame{data: hello}
	s.active = c
	s.flushLocked()
	s.notify()
	s.mu.Unlock()

	s.readLoop(c)
}

// flushLocked sends what waits for a connection: queued envelopes, and a
// retry of every events_api envelope written to a socket that died
// before it was acked. s.mu must be held and a connection open.
func (s *Server) flushLocked() {
	s.retryDeadLocked()
	pending := s.pending
	s.pending = nil
	for _, e := range pending {
		s.sendLocked(e)
	}
}

// retryDeadLocked queues a retry of every events_api envelope that was
// written to a socket that is gone and was never acked (Slack re-sends
// unacknowledged events). s.mu must be held.
func (s *Server) retryDeadLocked() {
	for _, e := range s.envelopes {
		if e.Type != "events_api" || e.Acked || e.redelivered || e.Conn == 0 || e.Sent.IsZero() {
			continue
		}
		if _, alive := s.conns[e.Conn]; alive {
			continue
		}
		e.redelivered = true
		s.queueLocked(e.Type, e.Payload, e.TS, e.Retry+1, e.ID)
	}
}

// queueLocked records a new envelope and sends it (or keeps it until a
// socket connects). s.mu must be held.
func (s *Server) queueLocked(typ string, payload json.RawMessage, ts string, retry int, retryOf string) string {
	e := &envelope{Envelope: Envelope{
		ID:      s.nextID("env-"),
		Type:    typ,
		Payload: payload,
		TS:      ts,
		Retry:   retry,
		RetryOf: retryOf,
		Queued:  time.Now(),
	}}
	s.envelopes = append(s.envelopes, e)
	s.byEnvelope[e.ID] = e
	s.sendLocked(e)
	s.notify()
	return e.ID
}

// pickLocked returns the connection for the next envelope: like Slack
// with several Socket Mode connections of one app (one per replica), each
// envelope goes to one of them, in turn; nil when none may take it.
// s.mu must be held.
func (s *Server) pickLocked() *wsConn {
	if c, ok := s.conns[s.steer]; ok && !c.retired {
		return c
	}
	ids := make([]int, 0, len(s.conns))
	for id, c := range s.conns {
		if !c.retired {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	slices.Sort(ids)
	s.turn++
	return s.conns[ids[s.turn%len(ids)]]
}

// Steer sends every envelope from now on to connection id (the order in
// which connections were accepted, from 1) while it is open, instead of
// taking the connections in turn; 0 goes back to taking turns. Tests use it
// to make one replica of several take a message.
func (s *Server) Steer(id int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.steer = id
}

// sendLocked hands an envelope to one open socket's writer (pickLocked),
// or keeps it pending. s.mu must be held.
func (s *Server) sendLocked(e *envelope) {
	c := s.pickLocked()
	if c == nil {
		e.Conn = 0
		s.pending = append(s.pending, e)
		return
	}
	msg := map[string]any{
		"envelope_id":              e.ID,
		"type":                     e.Type,
		"payload":                  e.Payload,
		"accepts_response_payload": e.Type == "interactive",
	}
	if e.Retry > 0 {
		msg["retry_attempt"] = e.Retry
		msg["retry_reason"] = "timeout"
	}
	data, _ := json.Marshal(msg)
	select {
	case c.out <- frame{data: data, env: e}:
		e.Conn = c.id
	default: // writer stuck: treat the socket as dead
		e.Conn = 0
		s.pending = append(s.pending, e)
	}
}

// writeLoop writes frames and pings until the connection dies.
func (s *Server) writeLoop(c *wsConn) {
	defer s.wg.Done()
	ping := time.NewTicker(s.pingEvery)
	defer ping.Stop()
	for {
		select {
		case <-c.done:
			return
		case f := <-c.out:
			if f.env != nil {
				// Recorded before the write so that an ack can never
				// precede it.
				s.mu.Lock()
				f.env.Sent = time.Now()
				s.notify()
				s.mu.Unlock()
			}
			_ = c.ws.SetWriteDeadline(time.Now().Add(5 * time.Second))
			if err := c.ws.WriteMessage(websocket.TextMessage, f.data); err != nil {
				c.kill()
				return
			}
		case <-ping.C:
			if err := c.ws.WriteControl(websocket.PingMessage, []byte("ping"), time.Now().Add(5*time.Second)); err != nil {
				c.kill()
				return
			}
		}
	}
}

// readLoop reads acks until the connection dies, then forgets it.
func (s *Server) readLoop(c *wsConn) {
	defer s.gone(c)
	for {
		_, data, err := c.ws.ReadMessage()
		if err != nil {
			return
		}
		var ack struct {
			EnvelopeID string          `json:"envelope_id"`
			Payload    json.RawMessage `json:"payload"`
		}
		if json.Unmarshal(data, &ack) != nil || ack.EnvelopeID == "" {
			continue
		}
		now := time.Now()
		s.mu.Lock()
		s.acks = append(s.acks, Ack{EnvelopeID: ack.EnvelopeID, Payload: ack.Payload, Conn: c.id, At: now})
		if e, ok := s.byEnvelope[ack.EnvelopeID]; ok && !e.Acked {
			e.Acked = true
			e.AckedAt = now
		}
		s.notify()
		s.mu.Unlock()
	}
}

// gone forgets a dead connection. Envelopes it did not ack are re-sent
// when the next connection arrives.
func (s *Server) gone(c *wsConn) {
	c.kill()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.goneLocked(c)
}

// goneLocked forgets c (again: it is idempotent). s.mu must be held.
func (s *Server) goneLocked(c *wsConn) {
	delete(s.conns, c.id)
	if s.active == c {
		s.active = nil
	}
	// Frames the writer never took go back to the queue unchanged.
	for _, e := range s.envelopes {
		if e.Conn == c.id && e.Sent.IsZero() && !e.Acked {
			e.Conn = 0
			s.pending = append(s.pending, e)
		}
	}
	if s.pickable() {
		s.flushLocked() // to another connection, as Slack retries
	}
	s.notify()
}

// pickable reports whether a connection may take envelopes. s.mu must be held.
func (s *Server) pickable() bool {
	for _, c := range s.conns {
		if !c.retired {
			return true
		}
	}
	return false
}

// Disconnect sends a "disconnect" envelope on the connected socket, as
// Slack does before it rotates connections. From then on, new envelopes
// wait for the client's next connection. It reports whether a socket was
// connected.
func (s *Server) Disconnect() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.active
	if c == nil {
		return false
	}
	data, _ := json.Marshal(map[string]any{
		"type":       "disconnect",
		"reason":     "refresh_requested",
		"debug_info": map[string]any{"host": "slackfake"},
	})
	select {
	case c.out <- frame{data: data}:
	default:
	}
	c.retired = true
	s.active = nil
	s.notify()
	return true
}

// DropSocket closes the connected socket's TCP connection without a
// close frame, as a network failure would. It reports whether a socket
// was connected.
func (s *Server) DropSocket() bool {
	s.mu.Lock()
	c := s.active
	if c != nil {
		// Forget it now, not when the reader notices, so that the next
		// connection surely gets the retries of what it left unacked.
		s.goneLocked(c)
	}
	s.mu.Unlock()
	if c == nil {
		return false
	}
	c.kill()
	return true
}

// RefuseConnections makes the next n calls of apps.connections.open
// answer HTTP 503 (ok:false, service_unavailable), as during a Slack
// outage: no Socket Mode connection can start while it lasts. n < 0
// refuses all, 0 stops refusing. A connected socket stays.
func (s *Server) RefuseConnections(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refuseOpen = n
}

// RefuseSockets makes the next n websocket handshakes at the URL that
// apps.connections.open returned fail with HTTP 503 (the client sees a bad
// handshake), as when the network to Slack's websocket hosts is down. n
// < 0 refuses all, 0 stops refusing. Refusals are recorded as calls of
// method "websocket".
func (s *Server) RefuseSockets(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refuseWS = n
}

// takeRefusal reports whether *left asks for a refusal and counts it
// down (negative: refuse forever). s.mu must be held.
func (s *Server) takeRefusal(left *int) bool {
	if *left == 0 {
		return false
	}
	if *left > 0 {
		*left--
	}
	return true
}
