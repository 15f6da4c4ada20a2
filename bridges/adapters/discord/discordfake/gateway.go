package discordfake

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// maxSessionLog bounds the events a session keeps for RESUME replays; a
// RESUME from further back gets op 9 (invalid session), as on Discord.
const maxSessionLog = 10000

// GatewayStats counts what happened on the gateway.
type GatewayStats struct {
	Connections     int // websocket connections accepted
	Identifies      int // successful IDENTIFYs (each answered with READY)
	Resumes         int // successful RESUMEs (each answered with RESUMED)
	InvalidSessions int // op 9 sent (injected or for an unknown RESUME)
	Heartbeats      int // heartbeats received (each ACKed)
	Live            int // open connections with a ready or resumed session
	// MaxLive is the most connections that were live at once (a bot
	// served by several replicas must never have two: each would get
	// every event).
	MaxLive   int
	Refused   int    // handshakes refused (RefuseGateway)
	SessionID string // the newest session id
}

// session is a gateway session: it survives connections (RESUME) and
// keeps the events dispatched to it for replay.
type session struct {
	id   string
	seq  int64
	log  []event
	conn *conn // nil while disconnected: events are logged for RESUME
}

type event struct {
	seq  int64
	data []byte
}

// conn is one websocket connection. A single writer goroutine sends its
// queue in order, so that enqueueing never blocks while f.mu is held.
type conn struct {
	f    *Fake
	ws   *websocket.Conn
	sess *session // guarded by f.mu

	mu     sync.Mutex
	queue  []outItem
	dead   bool
	closed bool // the fake sent a close frame (the client's close answers it)
	wake   chan struct{}
	done   chan struct{} // closed when the reader ends
}

type outItem struct {
	data  []byte
	close int    // send a close frame with this code, then end
	text  string // close reason
	drop  bool   // drop the TCP connection without a close frame
}

var upgrader = websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}

func (f *Fake) serveGateway(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	refuse := f.refuse != 0
	if f.refuse > 0 {
		f.refuse--
	}
	if refuse {
		f.stats.Refused++
		f.notify()
	}
	f.mu.Unlock()
	if refuse {
		http.Error(w, "502 Bad Gateway", http.StatusBadGateway)
		return
	}
	ws, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		return // Upgrade has answered the client
	}
	c := &conn{f: f, ws: ws, wake: make(chan struct{}, 1), done: make(chan struct{})}
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		ws.Close()
		return
	}
	f.conns[c] = struct{}{}
	f.stats.Connections++
	f.notify()
	f.mu.Unlock()
	go c.writeLoop()
	c.send(payload(opHello, map[string]any{"heartbeat_interval": f.opts.HeartbeatInterval.Milliseconds()}))
	err = c.readLoop()

	close(c.done)
	f.mu.Lock()
	delete(f.conns, c)
	if c.sess != nil && c.sess.conn == c {
		c.sess.conn = nil
	}
	// As on Discord, a client closing with 1000 or 1001 ends its session
	// (a RESUME of it gets op 9 and the client identifies anew) — unless
	// it only answers the fake's own close frame.
	c.mu.Lock()
	answered := c.closed
	c.mu.Unlock()
	if c.sess != nil && !answered && websocket.IsCloseError(err, websocket.CloseNormalClosure, websocket.CloseGoingAway) {
		delete(f.sessions, c.sess.id)
	}
	f.notify()
	f.mu.Unlock()
	c.kill()
}

func payload(op int, d any) []byte {
	b, err := json.Marshal(map[string]any{"op": op, "d": d, "s": nil, "t": nil})
	if err != nil {
		panic(err) // only static shapes are marshalled here
	}
	return b
}

func dispatchPayload(seq int64, t string, d json.RawMessage) []byte {
	b, err := json.Marshal(map[string]any{"op": opDispatch, "d": d, "s": seq, "t": t})
	if err != nil {
		panic(err)
	}
	return b
}

// readLoop reads the client's payloads until the connection ends, and
// returns why it ended.
func (c *conn) readLoop() error {
	for {
		_, data, err := c.ws.ReadMessage()
		if err != nil {
			return err
		}
		var p gatewayPayload
		if err := json.Unmarshal(data, &p); err != nil {
			c.closeWith(4002, "Error while decoding payload.")
			return nil
		}
		switch p.Op {
		case opHeartbeat:
			c.f.mu.Lock()
			c.f.stats.Heartbeats++
			c.f.mu.Unlock()
			c.send(payload(opHeartbeatACK, nil))
		case opIdentify:
			var d identifyData
			_ = json.Unmarshal(p.D, &d)
			c.f.identify(c, d)
		case opResume:
			var d resumeData
			_ = json.Unmarshal(p.D, &d)
			c.f.resume(c, d)
		case opPresenceUpdate:
		default:
			c.closeWith(4001, "Unknown opcode.")
		}
	}
}

func (f *Fake) tokenOK(token string) bool {
	return strings.TrimPrefix(token, "Bot ") == f.opts.Token
}

func (f *Fake) identify(c *conn, d identifyData) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case !f.tokenOK(d.Token):
		c.closeWith(CloseAuthenticationFailed, "Authentication failed.")
		return
	case f.denyContent && d.Intents&IntentMessageContent != 0:
		c.closeWith(CloseDisallowedIntents, "Disallowed intent(s).")
		return
	case c.sess != nil:
		c.closeWith(4005, "Already authenticated.")
		return
	}
	s := &session{id: randomHex(16)}
	f.sessions[s.id] = s
	c.sess, s.conn = s, c
	s.seq++
	ready, _ := json.Marshal(map[string]any{
		"v":                  9,
		"user":               f.users[f.opts.BotID],
		"guilds":             []any{},
		"private_channels":   []any{},
		"session_id":         s.id,
		"session_type":       "normal",
		"resume_gateway_url": f.GatewayURL(),
		"shard":              []int{0, 1},
		"application":        map[string]any{"id": f.opts.AppID, "flags": 0},
	})
	c.send(dispatchPayload(s.seq, "READY", ready))
	f.stats.Identifies++
	f.noteLive()
	f.stats.SessionID = s.id
	f.notify()
}

func (f *Fake) resume(c *conn, d resumeData) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.tokenOK(d.Token) {
		c.closeWith(CloseAuthenticationFailed, "Authentication failed.")
		return
	}
	s, ok := f.sessions[d.SessionID]
	if ok && len(s.log) > 0 && s.log[0].seq > d.Seq+1 {
		delete(f.sessions, s.id) // too far behind to replay
		ok = false
	}
	if !ok {
		f.stats.InvalidSessions++
		f.notify()
		c.send(payload(opInvalidSession, false))
		return
	}
	if s.conn != nil && s.conn != c {
		s.conn.kill()
	}
	c.sess, s.conn = s, c
	from := d.Seq - int64(f.resumeReplay)
	f.resumeReplay = 0
	for _, ev := range s.log {
		if ev.seq > from {
			c.send(ev.data)
		}
	}
	s.seq++
	c.send(dispatchPayload(s.seq, "RESUMED", json.RawMessage("{}")))
	f.stats.Resumes++
	f.noteLive()
	f.notify()
}

// noteLive updates MaxLive after a connection became live. Caller holds
// f.mu.
func (f *Fake) noteLive() {
	n := 0
	for c := range f.conns {
		if c.sess != nil {
			n++
		}
	}
	f.stats.MaxLive = max(f.stats.MaxLive, n)
}

// dispatch sends an event to every valid session (logging it for RESUME
// when the session is between connections). Caller holds f.mu.
func (f *Fake) dispatch(t string, d any) {
	raw, err := json.Marshal(d)
	if err != nil {
		panic(err)
	}
	for _, s := range f.sessions {
		s.seq++
		ev := event{seq: s.seq, data: dispatchPayload(s.seq, t, raw)}
		s.log = append(s.log, ev)
		if len(s.log) > maxSessionLog {
			s.log = s.log[len(s.log)-maxSessionLog:]
		}
		if s.conn != nil {
			s.conn.send(ev.data)
		}
	}
}

func (c *conn) enqueue(it outItem) {
	c.mu.Lock()
	if !c.dead {
		c.queue = append(c.queue, it)
	}
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

func (c *conn) send(data []byte)                { c.enqueue(outItem{data: data}) }
func (c *conn) closeWith(code int, text string) { c.enqueue(outItem{close: code, text: text}) }
func (c *conn) drop()                           { c.enqueue(outItem{drop: true}) }

// kill ends the connection at once.
func (c *conn) kill() {
	c.mu.Lock()
	c.dead = true
	c.mu.Unlock()
	c.ws.Close()
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

func (c *conn) writeLoop() {
	for {
		c.mu.Lock()
		if c.dead {
			c.mu.Unlock()
			return
		}
		if len(c.queue) == 0 {
			c.mu.Unlock()
			select {
			case <-c.wake:
				continue
			case <-c.done:
				return // the client went away: nothing more to send
			}
		}
		it := c.queue[0]
		c.queue = c.queue[1:]
		c.mu.Unlock()
		switch {
		case it.drop:
			c.ws.Close()
			return
		case it.close != 0:
			c.mu.Lock()
			c.closed = true
			c.mu.Unlock()
			msg := websocket.FormatCloseMessage(it.close, it.text)
			_ = c.ws.WriteControl(websocket.CloseMessage, msg, time.Now().Add(time.Second))
			// Let the client read the close frame before the TCP close.
			select {
			case <-c.done:
			case <-time.After(2 * time.Second):
			}
			c.ws.Close()
			return
		default:
			_ = c.ws.SetWriteDeadline(time.Now().Add(5 * time.Second))
			if err := c.ws.WriteMessage(websocket.TextMessage, it.data); err != nil {
				c.ws.Close()
				return
			}
		}
	}
}
