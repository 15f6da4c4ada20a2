package fakemodel

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentbridge/agentbridge/internal/textcut"
)

// maxBodyBytes caps a request body; the CLI sends ~50 KB per request.
const maxBodyBytes = 64 << 20

// APIKey is the key Env points the CLI at. The fake accepts any key.
const APIKey = "test-key"

// Server is a running fake of the Anthropic Messages API on 127.0.0.1.
// All methods are safe for concurrent use.
type Server struct {
	log    *slog.Logger
	http   *http.Server
	url    string
	served chan struct{} // closed when Serve returned

	plan    Planner
	forget  bool         // Options.Forget: requests are answered, not kept
	nextReq atomic.Int64 // request-id counter

	nextTool atomic.Int64
	nextMsg  atomic.Int64

	mu       sync.Mutex
	requests []Request
	changed  chan struct{} // closed and replaced whenever requests changes
	closed   bool
	active   int        // handlers running
	idle     *sync.Cond // on mu; signalled when active drops to 0
}

// TB is the part of testing.TB that New uses (an interface of its own, so
// that programs embedding the fake, such as the bridge's demo mode, do not
// link the testing package).
type TB interface {
	Helper()
	Log(args ...any)
	Fatalf(format string, args ...any)
	Cleanup(func())
}

// New starts a Server for a test: it logs through tb.Log, fails the test if
// it cannot listen, and is closed by tb.Cleanup.
func New(tb TB) *Server {
	tb.Helper()
	s, err := Start(slog.New(slog.NewTextHandler(tbWriter{tb}, &slog.HandlerOptions{Level: slog.LevelDebug})))
	if err != nil {
		tb.Fatalf("start fake model: %v", err)
	}
	tb.Cleanup(s.Close)
	return s
}

// Planner decides the answer to one Messages API request; newToolID returns
// a fresh tool_use id each call. PlanReply is the default. A Planner must be
// safe for concurrent use and should depend only on the request, so that
// answers survive --resume and restarts.
type Planner func(req Request, newToolID func() string) Reply

// Options configure a Server started with StartWith.
type Options struct {
	Logger *slog.Logger // required
	// Plan answers POST /v1/messages; nil = PlanReply (the directive scripts).
	Plan Planner
	// Forget answers requests without keeping them, for a long-running server
	// (the bridge's demo mode): Requests then stays empty and WaitForRequest
	// waits until ctx ends.
	Forget bool
}

// Start starts a Server on a free port of 127.0.0.1 that logs to logger and
// answers with PlanReply. The caller must Close it.
func Start(logger *slog.Logger) (*Server, error) {
	return StartWith(Options{Logger: logger})
}

// StartWith starts a Server on a free port of 127.0.0.1 configured by o.
// The caller must Close it.
func StartWith(o Options) (*Server, error) {
	if o.Logger == nil {
		return nil, errors.New("fakemodel: Options.Logger is required")
	}
	if o.Plan == nil {
		o.Plan = PlanReply
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("fakemodel: listen on 127.0.0.1: %w", err)
	}
	s := &Server{
		log:     o.Logger,
		url:     "http://" + ln.Addr().String(),
		plan:    o.Plan,
		forget:  o.Forget,
		served:  make(chan struct{}),
		changed: make(chan struct{}),
	}
	s.idle = sync.NewCond(&s.mu)
	s.http = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		defer close(s.served)
		if err := s.http.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Error("fakemodel: serve", "err", err)
		}
	}()
	s.log.Debug("fakemodel: listening", "url", s.url)
	return s, nil
}

// URL returns the base URL, e.g. "http://127.0.0.1:41234" (the value for
// ANTHROPIC_BASE_URL).
func (s *Server) URL() string { return s.url }

// Env returns the environment that points a Claude Code CLI at the fake,
// offline and without retries: ANTHROPIC_BASE_URL, ANTHROPIC_API_KEY,
// DISABLE_TELEMETRY, CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC,
// DISABLE_AUTOUPDATER and CLAUDE_CODE_MAX_RETRIES=0. HOME and TMPDIR are
// left to the caller.
func (s *Server) Env() []string {
	return []string{
		"ANTHROPIC_BASE_URL=" + s.url,
		"ANTHROPIC_API_KEY=" + APIKey,
		"DISABLE_TELEMETRY=1",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_AUTOUPDATER=1",
		"CLAUDE_CODE_MAX_RETRIES=0",
	}
}

// Close stops the server: open streams are cut, and Close returns once
// every handler has finished, so nothing logs afterwards. Idempotent.
func (s *Server) Close() {
	s.mu.Lock()
	already := s.closed
	s.closed = true
	s.mu.Unlock()
	if already {
		return
	}
	_ = s.http.Close() // closes listeners and connections; handlers see their context cancelled
	<-s.served
	s.mu.Lock()
	for s.active > 0 {
		s.idle.Wait()
	}
	s.mu.Unlock()
}

// enter registers a running handler; it fails once Close has begun.
func (s *Server) enter() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.active++
	return true
}

// leave unregisters a handler registered by enter.
func (s *Server) leave() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.active--
	if s.active == 0 {
		s.idle.Broadcast()
	}
}

// Requests returns a copy of every request received so far, oldest first.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// MessagesRequests returns the recorded POST /v1/messages requests.
func (s *Server) MessagesRequests() []Request {
	var out []Request
	for _, r := range s.Requests() {
		if r.IsMessages() {
			out = append(out, r)
		}
	}
	return out
}

// WaitForRequest blocks until a recorded request satisfies match (requests
// already recorded count) and returns it, or returns ctx's error.
// A request is offered to match when it arrives and again when its answer
// is complete (Status set).
func (s *Server) WaitForRequest(ctx context.Context, match func(Request) bool) (Request, error) {
	for {
		s.mu.Lock()
		changed := s.changed
		for _, r := range s.requests {
			if match(r) {
				s.mu.Unlock()
				return r, nil
			}
		}
		s.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			return Request{}, fmt.Errorf("fakemodel: wait for request: %w", ctx.Err())
		}
	}
}

// record appends r and returns its index, or -1 when the server forgets
// requests.
func (s *Server) record(r Request) int {
	if s.forget {
		return -1
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, r)
	s.notifyLocked()
	return len(s.requests) - 1
}

// finish stores the outcome of request i (a no-op for i < 0).
func (s *Server) finish(i, status int, script, reply string) {
	if i < 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests[i].Status, s.requests[i].Script, s.requests[i].Reply = status, script, reply
	s.notifyLocked()
}

func (s *Server) notifyLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// ServeHTTP records the request and answers it.
func (s *Server) ServeHTTP(w http.ResponseWriter, hr *http.Request) {
	if !s.enter() {
		http.Error(w, "fakemodel: server closing", http.StatusServiceUnavailable)
		return
	}
	defer s.leave()

	body, err := io.ReadAll(io.LimitReader(hr.Body, maxBodyBytes))
	if err != nil {
		s.log.Warn("fakemodel: read request body", "path", hr.URL.Path, "err", err)
		return
	}
	req := Request{
		Time: time.Now(), Method: hr.Method, Path: hr.URL.Path, RawQuery: hr.URL.RawQuery,
		Header: redactHeaders(hr.Header), Body: body,
	}
	isAPI := hr.Method == http.MethodPost && (req.Path == "/v1/messages" || req.Path == "/v1/messages/count_tokens")
	var parseErr error
	if isAPI {
		parseErr = req.parseBody()
	}
	idx := s.record(req)
	n := s.nextReq.Add(1)
	reqID := fmt.Sprintf("req_fake_%06d", n)
	w.Header().Set("request-id", reqID)

	switch {
	case parseErr != nil:
		s.log.Warn("fakemodel: bad request body", "path", req.Path, "err", parseErr)
		s.writeError(w, idx, http.StatusBadRequest, "bad-request", "invalid_request_error", parseErr.Error(), reqID)
	case !isAPI:
		s.log.Warn("fakemodel: unexpected request", "method", req.Method, "path", req.Path, "query", req.RawQuery)
		msg := fmt.Sprintf("fakemodel: no route for %s %s", req.Method, req.Path)
		s.writeError(w, idx, http.StatusNotFound, "not-found", "not_found_error", msg, reqID)
	case req.Path == "/v1/messages/count_tokens":
		n := estimateInputTokens(req)
		w.Header().Set("Content-Type", "application/json")
		_, _ = fmt.Fprintf(w, `{"input_tokens":%d}`, n)
		s.finish(idx, http.StatusOK, "count-tokens", "")
		s.log.Debug("fakemodel: count_tokens", "input_tokens", n)
	default:
		s.answer(hr.Context(), w, idx, n, req, reqID)
	}
}

// answer runs the script for a POST /v1/messages request.
func (s *Server) answer(ctx context.Context, w http.ResponseWriter, idx int, n int64, req Request, reqID string) {
	r := s.plan(req, func() string { return fmt.Sprintf("toolu_fake_%03d", s.nextTool.Add(1)) })
	s.log.Debug("fakemodel: messages request",
		"n", n, "stream", req.Stream, "model", req.Model, "max_tokens", req.MaxTokens,
		"messages", len(req.Messages), "tools", len(req.Tools), "script", r.Script,
		"user_text", textcut.Truncate(LastUserText(req), 120))
	if r.Status != 0 {
		s.writeError(w, idx, r.Status, r.Script, r.ErrorType, r.ErrorMessage, reqID)
		return
	}
	model := req.Model
	if model == "" {
		model = "claude-fake"
	}
	msgID := fmt.Sprintf("msg_fake_%06d", s.nextMsg.Add(1))
	text := r.Text()
	u := Usage{InputTokens: estimateInputTokens(req), OutputTokens: max(1, (len(text)+len(toolInputs(r)))/4)}

	if !req.Stream {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(MessageJSON(msgID, model, r, u))
		s.finish(idx, http.StatusOK, r.Script, text)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	for _, e := range StreamEvents(msgID, model, r, u) {
		if e.Pause && r.Delay > 0 {
			select {
			case <-time.After(r.Delay):
			case <-ctx.Done():
				s.log.Debug("fakemodel: client went away mid-stream", "n", n)
				s.finish(idx, http.StatusOK, r.Script+" (cut)", text)
				return
			}
		}
		if err := WriteEvent(w, e); err != nil {
			s.log.Debug("fakemodel: stream cut", "n", n, "err", err)
			s.finish(idx, http.StatusOK, r.Script+" (cut)", text)
			return
		}
		if flusher != nil {
			flusher.Flush()
		}
	}
	s.finish(idx, http.StatusOK, r.Script, text)
}

// writeError answers with Anthropic's error JSON.
func (s *Server) writeError(w http.ResponseWriter, idx, status int, script, errType, msg, reqID string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("x-should-retry", "false")
	w.WriteHeader(status)
	_, _ = w.Write(ErrorJSON(errType, msg, reqID))
	s.finish(idx, status, script, msg)
}

// estimateInputTokens is a rough, deterministic token count: 10 plus a
// quarter of the message characters.
func estimateInputTokens(req Request) int {
	n := 0
	for _, m := range req.Messages {
		for _, b := range m.Blocks {
			n += len(b.Text) + len(b.Input)
		}
	}
	return 10 + n/4
}

// toolInputs returns the marshalled tool inputs of r, for usage counting.
func toolInputs(r Reply) string {
	var b strings.Builder
	for _, blk := range r.Blocks {
		if blk.Type == "tool_use" {
			b.Write(mustJSON(blk.Input))
		}
	}
	return b.String()
}

// tbWriter adapts a TB to an io.Writer for slog.
type tbWriter struct{ tb TB }

func (w tbWriter) Write(p []byte) (int, error) {
	w.tb.Helper()
	w.tb.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
