package pool

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/netutil"

	"github.com/agentbridge/agentbridge/agent"
)

// warmUpBlocker says why the CLI of opts must not run a warm-up turn: its
// model requests might not follow ANTHROPIC_BASE_URL, a settings file sets
// where they go (the flag settings of the warm-up would override it), or
// a settings file has hooks or plugins that would act on the warm-up turn.
// "" means a warm-up turn is safe.
func warmUpBlocker(opts agent.Options) string {
	if opts.Kind == agent.KindACP {
		return "an agent of kind acp has no warm-up turn (it talks to its own model API)"
	}
	for k, v := range opts.Env {
		if providerKey(k) && v != "" && v != "0" && !strings.EqualFold(v, "false") {
			return "the agent env sets " + k
		}
	}
	files := []string{
		filepath.Join(opts.Workdir, ".claude", "settings.json"),
		filepath.Join(opts.Workdir, ".claude", "settings.local.json"),
		"/etc/claude-code/managed-settings.json",
	}
	if more, err := filepath.Glob("/etc/claude-code/managed-settings.d/*.json"); err == nil {
		files = append(files, more...)
	}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Sprintf("settings file %s: %v", f, err)
		}
		var settings struct {
			Env            map[string]any  `json:"env"`
			Hooks          map[string]any  `json:"hooks"`
			EnabledPlugins map[string]bool `json:"enabledPlugins"`
		}
		if err := json.Unmarshal(raw, &settings); err != nil {
			return fmt.Sprintf("settings file %s: %v", f, err)
		}
		for k := range settings.Env {
			if providerKey(k) || k == "ANTHROPIC_BASE_URL" {
				return fmt.Sprintf("settings file %s sets %s", f, k)
			}
		}
		// Hooks (the settings' own or a plugin's) would run for the
		// warm-up turn too: a prompt hook would see a message nobody sent.
		if len(settings.Hooks) > 0 {
			return fmt.Sprintf("settings file %s has hooks", f)
		}
		for name, on := range settings.EnabledPlugins {
			if on {
				return fmt.Sprintf("settings file %s enables plugin %s", f, name)
			}
		}
	}
	return ""
}

// providerKey reports whether environment variable k makes the CLI send
// its model requests somewhere ANTHROPIC_BASE_URL does not decide.
func providerKey(k string) bool {
	return strings.HasPrefix(k, "CLAUDE_CODE_USE_") || k == "ANTHROPIC_UNIX_SOCKET"
}

// warmModel is the local stand-in for the Messages API that answers
// warm-up turns: POST {url}/warmup/<token>/v1/messages gets a two-letter
// text answer with zero usage (so the turn costs nothing, and adds nothing
// to the cost the CLI reports later), streamed when asked. It listens on
// 127.0.0.1, where an agent with the host's network can reach it, so it
// keeps no state a caller can grow: it answers only tokens the pool issued
// (issue) and has not yet forgotten, one per warm-up in progress, and
// counts their requests so that each warm-up can tell that its request
// arrived. Any other path or token is refused before its body is read,
// and nothing of it is kept. Connections, headers, bodies and the time a
// request may take are bounded (warmModelMaxConns and the server's
// timeouts), so a flood costs the bridge at most a fixed amount of memory
// while it lasts.
type warmModel struct {
	url    string
	srv    *http.Server
	served chan struct{}

	mu   sync.Mutex
	hits map[string]int // issued token → requests; an entry lives from issue to forget
}

// Bounds of the warm-up model's server: concurrent connections (more wait
// in the kernel's backlog), header bytes, and the time a connection may
// take to send its headers, its whole request, its answer, or sit idle.
const (
	warmModelMaxConns      = 32
	warmModelMaxHeader     = 16 << 10
	warmModelHeaderTimeout = 5 * time.Second
	warmModelIOTimeout     = 30 * time.Second
	warmModelIdleTimeout   = 5 * time.Second
)

// startWarmModel listens on a free port of 127.0.0.1.
func startWarmModel(log *slog.Logger) (*warmModel, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("warm-up model: listen on 127.0.0.1: %w", err)
	}
	m := &warmModel{url: "http://" + ln.Addr().String(), served: make(chan struct{}), hits: map[string]int{}}
	m.srv = &http.Server{
		Handler:           m,
		ReadHeaderTimeout: warmModelHeaderTimeout,
		ReadTimeout:       warmModelIOTimeout,
		WriteTimeout:      warmModelIOTimeout,
		IdleTimeout:       warmModelIdleTimeout,
		MaxHeaderBytes:    warmModelMaxHeader,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelDebug),
	}
	log.Debug("agent: warm-up model listening", "addr", ln.Addr().String())
	go func() {
		defer close(m.served)
		if err := m.srv.Serve(netutil.LimitListener(ln, warmModelMaxConns)); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("agent: warm-up model stopped", "err", err)
		}
	}()
	return m, nil
}

// issue makes a fresh token for one warm-up, answered until forget.
func (m *warmModel) issue() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("warm-up model: token: %w", err)
	}
	token := hex.EncodeToString(b[:])
	m.mu.Lock()
	defer m.mu.Unlock()
	m.hits[token] = 0
	return token, nil
}

// baseURL is the ANTHROPIC_BASE_URL of one warm-up (token: its own).
func (m *warmModel) baseURL(token string) string { return m.url + "/warmup/" + token }

// requests is how many model requests arrived for token.
func (m *warmModel) requests(token string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.hits[token]
}

// forget stops answering token and drops its count.
func (m *warmModel) forget(token string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.hits, token)
}

// issued reports whether token is one the pool issued and still expects.
func (m *warmModel) issued(token string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.hits[token]
	return ok
}

// count adds one request to token's count if it is still issued.
func (m *warmModel) count(token string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.hits[token]; ok {
		m.hits[token]++
	}
}

// close stops the server and waits for it.
func (m *warmModel) close() {
	_ = m.srv.Close()
	<-m.served
}

// warmModelMaxBody bounds a request body (a first turn's request is about
// 100 KB: the system prompt and the tool definitions). Only a request with
// an issued token is read at all.
const warmModelMaxBody = 16 << 20

func (m *warmModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	token, ok := strings.CutPrefix(r.URL.Path, "/warmup/")
	if ok {
		token, ok = strings.CutSuffix(token, "/v1/messages")
	}
	if !ok || r.Method != http.MethodPost || !m.issued(token) {
		// Refused before the body is read; nothing of the request is kept.
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, `{"type":"error","error":{"type":"not_found_error","message":"not found"}}`)
		return
	}
	var req struct {
		Model  string `json:"model"`
		Stream bool   `json:"stream"`
	}
	if err := json.NewDecoder(io.LimitReader(r.Body, warmModelMaxBody)).Decode(&req); err != nil {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, `{"type":"error","error":{"type":"invalid_request_error","message":"bad request"}}`)
		return
	}
	m.count(token)
	model, _ := json.Marshal(req.Model)
	usage := `{"input_tokens":0,"output_tokens":0,"cache_creation_input_tokens":0,"cache_read_input_tokens":0}`
	w.Header().Set("request-id", "req_warmup")
	if !req.Stream {
		w.Header().Set("Content-Type", "application/json")
		_, _ = fmt.Fprintf(w, `{"id":"msg_warmup","type":"message","role":"assistant","model":%s,"content":[{"type":"text","text":"OK"}],"stop_reason":"end_turn","stop_sequence":null,"usage":%s}`, model, usage)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	events := [][2]string{
		{"message_start", fmt.Sprintf(`{"type":"message_start","message":{"id":"msg_warmup","type":"message","role":"assistant","model":%s,"content":[],"stop_reason":null,"stop_sequence":null,"usage":%s}}`, model, usage)},
		{"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`},
		{"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"OK"}}`},
		{"content_block_stop", `{"type":"content_block_stop","index":0}`},
		{"message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":0}}`},
		{"message_stop", `{"type":"message_stop"}`},
	}
	for _, e := range events {
		if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", e[0], e[1]); err != nil {
			return
		}
	}
}

// warmUpSpare runs spare s's warm-up turn against the pool's local model
// (started on first use) and checks that its request arrived there.
func (p *Pool) warmUpSpare(ctx context.Context, s *agent.Session, opts agent.Options, log interface {
	Debug(msg string, args ...any)
}) error {
	m, err := p.warmModel()
	if err != nil {
		return err
	}
	// Through the egress proxy, only this spare may reach the stand-in,
	// and only for its warm-up turn (no command has run in it yet).
	revoke, err := s.AdmitWarmUp(strings.TrimPrefix(m.url, "http://"))
	if err != nil {
		return err
	}
	defer revoke()
	token, err := m.issue()
	if err != nil {
		return err
	}
	defer m.forget(token)
	wctx, cancel := context.WithTimeout(ctx, spareWarmUpTimeout)
	defer cancel()
	began := time.Now()
	if err := s.WarmUp(wctx, m.baseURL(token), opts.Env["ANTHROPIC_BASE_URL"]); err != nil {
		return err
	}
	if m.requests(token) == 0 {
		return errors.New("the warm-up turn's model request did not arrive at the local model: this profile's requests go elsewhere")
	}
	log.Debug("agent: warm spare ran its warm-up turn", "session", s.SessionID(), "took", time.Since(began))
	return nil
}

// warmModel returns the pool's local model for warm-up turns, started on
// first use; Close stops it.
func (p *Pool) warmModel() (*warmModel, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, ErrClosed
	}
	if p.warm == nil {
		m, err := startWarmModel(p.log)
		if err != nil {
			return nil, err
		}
		p.warm = m
	}
	return p.warm, nil
}
