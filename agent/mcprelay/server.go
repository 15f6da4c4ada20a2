package mcprelay

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/agentbridge/agentbridge/agent/mcprelay/relay"
)

// Handler answers one JSON-RPC message: the response of a request, nil
// for a notification (agent.MCPServer.HandleMCP). It may block, and must
// return soon after ctx ends.
type Handler func(ctx context.Context, msg json.RawMessage) json.RawMessage

// Defaults for Config fields left zero.
const (
	DefaultMaxLine      = 1 << 20 // bytes of one message
	DefaultMaxConns     = 4
	DefaultMaxInFlight  = 16
	DefaultWriteTimeout = 30 * time.Second
)

// Config bounds a Server. Whatever the agent writes, the Server holds at
// most MaxConns × (MaxLine + MaxInFlight handlers) for it.
type Config struct {
	// Timeout bounds the handling of one message (Options.MCPTimeout);
	// required.
	Timeout time.Duration
	// MaxLine is the longest message, in bytes: a longer line is
	// answered with a JSON-RPC error and the connection closed.
	MaxLine int
	// MaxConns is how many relays may be connected at once; more are
	// closed at once.
	MaxConns int
	// MaxInFlight is how many messages of one connection are handled at
	// once; the connection is not read further until one is answered.
	MaxInFlight int
	// WriteTimeout bounds writing one answer: a relay that does not read
	// its answers is disconnected.
	WriteTimeout time.Duration
	Log          *slog.Logger
}

// JSON-RPC error codes the Server answers with itself.
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
	codeInternalError  = -32603
)

// Server serves a Handler on a Unix socket: each connection is one MCP
// client (a relay), each line one JSON-RPC message, handled concurrently
// (a tool call may block) within Config's bounds, its answer written back
// as one line. A line that is not a JSON object is answered with a
// JSON-RPC error (id null) and never reaches the Handler. Close stops it.
type Server struct {
	path    string
	file    os.FileInfo // the socket file, removed by Close only if still there
	ln      *net.UnixListener
	handler Handler
	cfg     Config
	ctx     context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup

	mu    sync.Mutex
	conns map[net.Conn]struct{}
}

// Listen creates the socket at path (an absolute path in a directory only
// the agent's session can reach; a file left there is replaced), mode
// 0600, and serves h on it until Close.
func Listen(path string, h Handler, cfg Config) (*Server, error) {
	if cfg.Timeout <= 0 {
		return nil, errors.New("mcp socket: no timeout")
	}
	if cfg.MaxLine <= 0 {
		cfg.MaxLine = DefaultMaxLine
	}
	if cfg.MaxConns <= 0 {
		cfg.MaxConns = DefaultMaxConns
	}
	if cfg.MaxInFlight <= 0 {
		cfg.MaxInFlight = DefaultMaxInFlight
	}
	if cfg.WriteTimeout <= 0 {
		cfg.WriteTimeout = DefaultWriteTimeout
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("mcp socket %s: remove the old one: %w", path, err)
	}
	addr, release, err := relay.ShortPath(path)
	if err != nil {
		return nil, fmt.Errorf("mcp socket %s: %w", path, err)
	}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: addr, Net: "unix"})
	release()
	if err != nil {
		return nil, fmt.Errorf("mcp socket %s: %w", path, err)
	}
	ln.SetUnlinkOnClose(false) // addr may name the file through a descriptor closed by then: Close removes path
	fi, err := os.Stat(path)
	if err == nil {
		err = os.Chmod(path, 0o600)
	}
	if err != nil {
		ln.Close()
		_ = os.Remove(path)
		return nil, fmt.Errorf("mcp socket %s: %w", path, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{path: path, file: fi, ln: ln, handler: h, cfg: cfg, ctx: ctx, cancel: cancel, conns: map[net.Conn]struct{}{}}
	s.wg.Add(1)
	go func() { defer s.wg.Done(); s.accept() }()
	return s, nil
}

// Path is the socket's path.
func (s *Server) Path() string { return s.path }

// Close stops accepting, closes every connection, ends the handlers'
// contexts, waits for them and removes the socket (unless another has
// replaced it meanwhile: the next agent of the same session).
func (s *Server) Close() error {
	s.cancel()
	err := s.ln.Close()
	s.mu.Lock()
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
	if fi, serr := os.Stat(s.path); serr == nil && os.SameFile(fi, s.file) {
		if rerr := os.Remove(s.path); rerr != nil && !errors.Is(rerr, os.ErrNotExist) && err == nil {
			err = rerr
		}
	}
	if err != nil && !errors.Is(err, net.ErrClosed) {
		return fmt.Errorf("mcp socket %s: close: %w", s.path, err)
	}
	return nil
}

// accept serves each connection in its own goroutine, at most MaxConns.
func (s *Server) accept() {
	for {
		c, err := s.ln.Accept()
		if err != nil {
			if s.ctx.Err() == nil {
				s.cfg.Log.Warn("mcp socket: accept failed: the agent's tools stop here", "socket", s.path, "err", err)
			}
			return
		}
		s.mu.Lock()
		full := len(s.conns) >= s.cfg.MaxConns
		if !full {
			s.conns[c] = struct{}{}
		}
		s.mu.Unlock()
		if full {
			s.cfg.Log.Warn("mcp socket: too many connections: one refused", "socket", s.path, "max", s.cfg.MaxConns)
			c.Close()
			continue
		}
		s.cfg.Log.Debug("mcp socket: the agent's relay connected", "socket", s.path)
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.serve(c)
			s.mu.Lock()
			delete(s.conns, c)
			s.mu.Unlock()
			c.Close()
		}()
	}
}

// conn is one connection's writer: answers go out whole, one at a time.
type conn struct {
	c       net.Conn
	timeout time.Duration
	mu      sync.Mutex
}

// send writes line and a newline; a write that fails or does not finish
// in time closes the connection.
func (w *conn) send(line []byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	_ = w.c.SetWriteDeadline(time.Now().Add(w.timeout))
	if _, err := w.c.Write(append(line, '\n')); err != nil {
		w.c.Close()
	}
}

// serve reads c's lines until it ends, the Server closes or a line is too
// long, handing each message to a handler goroutine.
func (s *Server) serve(c net.Conn) {
	w := &conn{c: c, timeout: s.cfg.WriteTimeout}
	r := bufio.NewReaderSize(c, 64<<10)
	slots := make(chan struct{}, s.cfg.MaxInFlight)
	var handlers sync.WaitGroup
	defer handlers.Wait()
	for {
		line, err := readLine(r, s.cfg.MaxLine)
		if errors.Is(err, errLineTooLong) {
			s.cfg.Log.Warn("mcp socket: a message over the size limit: connection closed", "socket", s.path, "max_bytes", s.cfg.MaxLine)
			w.send(errorLine(nil, codeInvalidRequest, fmt.Sprintf("message longer than %d bytes", s.cfg.MaxLine)))
			return
		}
		if msg := bytes.TrimSpace(line); len(msg) > 0 {
			if bad := check(msg); bad != nil {
				w.send(bad)
			} else {
				select {
				case slots <- struct{}{}:
				case <-s.ctx.Done():
					return
				}
				handlers.Add(1)
				go func() {
					defer handlers.Done()
					defer func() { <-slots }()
					if answer := s.handle(msg); answer != nil {
						w.send(answer)
					}
				}()
			}
		}
		if err != nil { // the message before the end was served
			return
		}
	}
}

// errLineTooLong is readLine's error for a line over the limit.
var errLineTooLong = errors.New("line too long")

// readLine returns the next line (without its newline), at most max
// bytes; a last line without a newline comes with io.EOF.
func readLine(r *bufio.Reader, max int) ([]byte, error) {
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		if len(line)+len(bytes.TrimSuffix(chunk, []byte("\n"))) > max {
			return nil, errLineTooLong
		}
		line = append(line, chunk...)
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err != nil:
			return line, err
		}
		return bytes.TrimSuffix(line, []byte("\n")), nil
	}
}

// check returns the error line answering msg when it is not a JSON
// object (garbage, a batch, a bare value), else nil.
func check(msg []byte) []byte {
	if !json.Valid(msg) {
		return errorLine(nil, codeParseError, "parse error: not JSON")
	}
	if msg[0] != '{' {
		return errorLine(nil, codeInvalidRequest, "invalid request: one JSON-RPC object per line")
	}
	return nil
}

// handle runs the handler for msg within Timeout and returns the answer
// line: the handler's response compacted to one line, a JSON-RPC error
// for a request it gave no valid answer (or panicked on), nil for a
// notification.
func (s *Server) handle(msg []byte) (answer []byte) {
	var head struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	_ = json.Unmarshal(msg, &head) // an object: fields of the wrong type are left out
	request := len(head.ID) > 0 && head.Method != ""
	defer func() {
		if p := recover(); p != nil {
			s.cfg.Log.Error("mcp socket: the MCP server panicked", "socket", s.path, "method", head.Method, "panic", fmt.Sprint(p))
			answer = nil
			if request {
				answer = errorLine(head.ID, codeInternalError, "internal error")
			}
		}
	}()
	ctx, cancel := context.WithTimeout(s.ctx, s.cfg.Timeout)
	defer cancel()
	resp := s.handler(ctx, json.RawMessage(msg))
	if resp == nil {
		if request {
			return errorLine(head.ID, codeInternalError, "the server gave no answer")
		}
		return nil
	}
	var out bytes.Buffer
	if err := json.Compact(&out, resp); err != nil {
		s.cfg.Log.Error("mcp socket: the MCP server gave an invalid answer", "socket", s.path, "method", head.Method, "err", err)
		if request {
			return errorLine(head.ID, codeInternalError, "the server gave an invalid answer")
		}
		return nil
	}
	return out.Bytes()
}

// errorLine is a JSON-RPC error response to id (nil: null).
func errorLine(id json.RawMessage, code int, text string) []byte {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	b, _ := json.Marshal(map[string]any{ // raw ids, ints and strings cannot fail
		"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": code, "message": text},
	})
	return b
}

var _ io.Closer = (*Server)(nil)

// Set is the sockets of one agent process, one per MCP server.
type Set struct{ servers []*Server }

// ListenAll serves each of hs on a socket of its own, dir/mcp-I.sock for
// hs[I], and returns them with the path of each ("" for one that could
// not be opened: logged, and left out). A nil Set is empty.
func ListenAll(dir string, hs []Handler, cfg Config) (*Set, []string) {
	set := &Set{}
	paths := make([]string, len(hs))
	for i, h := range hs {
		s, err := Listen(filepath.Join(dir, fmt.Sprintf("mcp-%d.sock", i)), h, cfg)
		if err != nil {
			if cfg.Log != nil {
				cfg.Log.Error("the agent's bridge tools are unavailable: their socket cannot be opened", "err", err)
			}
			continue
		}
		set.servers = append(set.servers, s)
		paths[i] = s.Path()
	}
	return set, paths
}

// Close closes every socket of the set (Server.Close), logging failures.
func (set *Set) Close() {
	if set == nil {
		return
	}
	for _, s := range set.servers {
		if err := s.Close(); err != nil {
			s.cfg.Log.Warn("mcp socket not closed", "err", err)
		}
	}
}
