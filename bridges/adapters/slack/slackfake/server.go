// Package slackfake is a fake Slack for tests. It speaks the real wire
// protocols to the real slack-go client: a Web API over HTTP (auth.test,
// apps.connections.open, chat.postMessage, chat.update, chat.postEphemeral,
// reactions.add/remove, assistant.threads.setStatus, users.info,
// conversations.info, file downloads, the external file upload:
// files.getUploadURLExternal, the upload POST, files.completeUploadExternal) and a Socket Mode websocket that
// sends hello, websocket pings and envelopes (events_api messages and
// app_mentions, interactive block_actions, disconnect), and records acks
// with their times.
//
// Like Slack, the fake
//   - sends a channel message that mentions the bot twice: as a "message"
//     and as an "app_mention" event with the same ts;
//   - echoes the bot's own posts back as "message" events with bot_id, and
//     its edits as "message_changed" events (WithoutEcho turns that off);
//   - with several sockets connected (one app's replicas), sends each
//     envelope to one of them in turn, and re-sends an envelope a dying
//     socket left unacked to another;
//   - queues envelopes while no socket is connected and, when a client
//     connects again, re-sends every events_api envelope that was written
//     to a socket that died before it was acked (retry_attempt+1, a new
//     envelope id);
//   - rejects Block Kit payloads over Slack's documented limits with
//     invalid_blocks and texts over 40,000 characters with msg_too_long.
//
// The bot token carries a scope set (WithScopes, SetScopes; default the
// manifest's): a call without its method's scope answers missing_scope
// with needed and provided, as Slack does (scopes.go).
//
// Tests inject faults: Inject429, FailMethod (any error code, e.g.
// token_revoked on auth.test), MissingScope (with Slack's scope
// diagnostics), SetOutage (HTTP 5xx until it ends), Disconnect,
// DropSocket, RefuseConnections and RefuseSockets (outages).
//
// Start one with New(t) and point a client at URL() (the api_url) with the
// tokens BotToken and AppToken. All methods are safe for concurrent use.
// Package cmd/bridge's end-to-end tests use it through a config file.
package slackfake

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// Credentials and ids of the fake workspace.
const (
	BotToken  = "xoxb-slackfake-bot-token"
	AppToken  = "xapp-slackfake-app-token"
	BotUserID = "UBOT0001"
	BotID     = "BBOT0001"
	TeamID    = "TFAKE001"
	AppID     = "AFAKE001"
)

// DefaultPingInterval is how often the fake pings a connected socket.
const DefaultPingInterval = 2 * time.Second

// Option configures a Server.
type Option func(*Server)

// WithPingInterval changes how often the fake sends websocket pings.
func WithPingInterval(d time.Duration) Option { return func(s *Server) { s.pingEvery = d } }

// WithoutEcho stops the fake from sending the bot's own posts and edits
// back as events.
func WithoutEcho() Option { return func(s *Server) { s.echo = false } }

// Server is a running fake Slack.
type Server struct {
	t         testing.TB
	http      *httptest.Server
	upgrader  websocket.Upgrader
	pingEvery time.Duration
	echo      bool
	wg        sync.WaitGroup // socket goroutines

	mu          sync.Mutex
	changed     chan struct{} // closed and replaced on every change
	closed      bool
	seq         int   // ids for envelopes, events, files, tickets
	tsBase      int64 // microseconds
	tsSeq       int64
	conns       map[int]*wsConn
	active      *wsConn // the newest connection (Disconnect, DropSocket)
	turn        int     // round robin over the connections (pickLocked)
	steer       int     // the connection every envelope goes to while open (Steer); 0 = round robin
	connCount   int
	envelopes   []*envelope
	byEnvelope  map[string]*envelope
	pending     []*envelope // waiting for a connection
	acks        []Ack
	messages    map[string]*Message // channel + "/" + ts
	userMsgs    []userMsg           // users' messages, for conversations.replies/history
	posts       []Message
	updates     []Message
	ephemerals  []Ephemeral
	reactions   []Reaction
	reactionSet map[string]bool
	statuses    []Status
	calls       []Call
	files       map[string]*storedFile
	users       map[string]User
	rateLimited map[string]int
	failures    map[string]failure
	lost        map[string]lostResponse // method → answers still to lose (history.go)
	holds       []*heldCall             // answers to hold (history.go, HoldResponse)
	outage      map[string]int          // method → HTTP status answered to every call (SetOutage)
	refuseOpen  int                     // apps.connections.open calls still to answer 503; < 0: all
	refuseWS    int                     // websocket handshakes still to refuse with 503; < 0: all
	// files.getUploadURLExternal → upload → files.completeUploadExternal
	pendingUploads map[string]*pendingUpload
	uploads        []Upload
	scopes         []string // the bot token's scopes (scopes.go)
}

type failure struct {
	code   string
	needed string // missing_scope: the scope the call needs
	n      int    // < 0: always
}

// New starts a fake Slack and stops it when the test ends.
func New(t testing.TB, opts ...Option) *Server {
	t.Helper()
	s := &Server{
		t:           t,
		pingEvery:   DefaultPingInterval,
		echo:        true,
		changed:     make(chan struct{}),
		tsBase:      time.Now().UnixMicro(),
		conns:       map[int]*wsConn{},
		byEnvelope:  map[string]*envelope{},
		messages:    map[string]*Message{},
		reactionSet: map[string]bool{},
		files:       map[string]*storedFile{},
		users:       map[string]User{},
		rateLimited: map[string]int{},
		failures:    map[string]failure{},
		outage:      map[string]int{},
		scopes:      DefaultScopes(),

		pendingUploads: map[string]*pendingUpload{},
	}
	// Slack's client sends Origin: https://api.slack.com.
	s.upgrader.CheckOrigin = func(*http.Request) bool { return true }
	for _, o := range opts {
		o(s)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/api/{method}", s.serveAPI)
	mux.HandleFunc("/link/", s.serveSocket)
	mux.HandleFunc("/files/{id}/{name}", s.serveFile)
	mux.HandleFunc("/upload/{id}", s.serveUpload)
	s.http = httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

// URL is the Web API base URL (ends in "/"): the api_url for a config or
// slack.OptionAPIURL.
func (s *Server) URL() string { return s.http.URL + "/api/" }

// Close drops every socket and stops the server. It is called by the test
// cleanup; calling it twice is harmless.
func (s *Server) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	conns := make([]*wsConn, 0, len(s.conns))
	for _, c := range s.conns {
		conns = append(conns, c)
	}
	s.active = nil
	s.notify()
	s.mu.Unlock()
	for _, c := range conns {
		c.kill()
	}
	s.http.Close()
	s.wg.Wait()
}

// notify wakes waiters; s.mu must be held.
func (s *Server) notify() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// nextID returns a fresh id with the prefix; s.mu must be held.
func (s *Server) nextID(prefix string) string {
	s.seq++
	return fmt.Sprintf("%s%06d", prefix, s.seq)
}

// nextTS returns a fresh, increasing message timestamp; s.mu must be held.
func (s *Server) nextTS() string {
	s.tsSeq++
	us := s.tsBase + s.tsSeq
	return fmt.Sprintf("%d.%06d", us/1_000_000, us%1_000_000)
}

// WaitFor calls cond until it returns true (nil) or timeout passes (an
// error). cond runs without the server's lock, so it may call any method.
func (s *Server) WaitFor(cond func() bool, timeout time.Duration) error {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		ch := s.changed
		s.mu.Unlock()
		if cond() {
			return nil
		}
		select {
		case <-ch:
		case <-deadline.C:
			return fmt.Errorf("slackfake: condition not met within %s", timeout)
		}
	}
}

// channelType guesses the event channel_type from a channel id like Slack
// assigns them: D… direct messages, G… group DMs (mpim), others channels.
func channelType(channel string) string {
	switch {
	case strings.HasPrefix(channel, "D"):
		return "im"
	case strings.HasPrefix(channel, "G"):
		return "mpim"
	default:
		return "channel"
	}
}
