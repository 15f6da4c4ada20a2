// Package handoff moves a conversation between chat and a terminal
// (docs/handoff.md). Its server, mounted on the bridge's HTTP listener
// under /handoff/v1/, lets a person named in config handoff.users:
//
//   - attach a terminal to a conversation's live agent (`bridge attach`):
//     the terminal sees what the conversation shows of the agent (its
//     streamed answer, tool lines, cards, notices) through the Hub, the
//     core's Observer; lines typed there are submitted as that person's
//     messages, and cards can be decided there as in chat;
//   - export the session transcript for a plain `claude --resume`
//     (`bridge export`);
//   - import a local Claude Code session into a new thread of a bot
//     (`bridge import`).
//
// Every request carries the person's token; they act with the rights of
// the user id config maps them to on the conversation's bot, as the one
// access decision (package access) gives them now: asked at every
// request, and for an open attach stream again at every change of
// access, so that a share ended, a conversation deleted or a reload that
// removes the person ends the stream (EventEnded) within a second. Every attach, detach, export
// and import, and every refused request, is written to the store's
// hand-off audit log (audit.go) and the bridge's log; attach, detach,
// export and import are shown in the conversation too. Client is the
// terminal side.
package handoff

import (
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core/access"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/store"
)

// TokenEnv is the environment variable the terminal reads the person's
// token from.
const TokenEnv = "BRIDGE_HANDOFF_TOKEN"

// Prefix is where the server is mounted on the bridge's HTTP listener.
const Prefix = "/handoff/v1/"

// Core is what the server needs of the running bridge (*core.Core).
type Core interface {
	bridges.Handler
	// Platform returns the adapter of bot, or nil.
	Platform(bot string) bridges.Platform
}

// Options configure a Server.
type Options struct {
	Config config.Source // required: handoff.users, bots, agent profiles, data_dir
	Store  *store.Store  // required
	Core   Core          // required
	Hub    *Hub          // required: the Observer wired into the core
	// Access is the bridge's one access decision (shared with the web
	// console and the core); default: one over Config and Store.
	Access *access.Authority
	Logger *slog.Logger // default discards
	// Heartbeat is how often an idle attach stream sends a comment so
	// that proxies and the terminal notice a dead connection; default 15s.
	Heartbeat time.Duration
}

// Server serves the hand-off endpoints. Create it with NewServer.
type Server struct {
	opts    Options
	access  *access.Authority
	log     *slog.Logger
	done    chan struct{} // closed by Shutdown: attach streams end
	mu      sync.Mutex
	stopped bool           // Shutdown was called: no new attach stream
	streams sync.WaitGroup // attach streams running
}

// NewServer returns a server over opts.
func NewServer(opts Options) *Server {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Heartbeat <= 0 {
		opts.Heartbeat = 15 * time.Second
	}
	a := opts.Access
	if a == nil {
		a = access.New(opts.Config, opts.Store)
	}
	return &Server{opts: opts, access: a, log: opts.Logger.With("feature", "handoff"), done: make(chan struct{})}
}

// Handler returns the routes, to mount at Prefix.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+Prefix+"attach", s.audited("attach", s.attach))
	mux.HandleFunc("POST "+Prefix+"send", s.audited("send", s.send))
	mux.HandleFunc("POST "+Prefix+"decide", s.audited("decide", s.decide))
	mux.HandleFunc("GET "+Prefix+"export", s.audited("export", s.export))
	mux.HandleFunc("POST "+Prefix+"import", s.audited("import", s.importSession))
	return mux
}

// Shutdown ends every attach stream (each is told the bridge is
// stopping) and waits for their handlers; register it with
// http.Server.RegisterOnShutdown.
func (s *Server) Shutdown() {
	s.mu.Lock()
	if !s.stopped {
		s.stopped = true
		close(s.done)
	}
	s.mu.Unlock()
	s.streams.Wait()
}

// startStream counts an attach stream for Shutdown; false once it was
// called.
func (s *Server) startStream() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return false
	}
	s.streams.Add(1)
	return true
}
