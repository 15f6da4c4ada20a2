package acp

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/internal/textcut"
)

// ErrNotPending is returned by Respond for a request that is not waiting
// for an answer (answered, withdrawn by a cancel, or unknown).
var ErrNotPending = errors.New("acp: permission request not pending")

// Config is what a Client needs from its host.
type Config struct {
	// SessionID is the host's id of the session, reported in Init and
	// Result events (the agent's own session id is another one).
	SessionID string
	// CWD is the agent's working directory (absolute): session/new's cwd.
	CWD string
	// Resume asks to continue an earlier session: LoadID is the agent's
	// session id it had ("" when it is not known). The client loads it
	// with session/load when the agent advertises loadSession; otherwise
	// it says so with a Notice and starts a new session.
	Resume bool
	LoadID string
	// EnvVars are the names of the environment variables set for the
	// agent: an agent that answers session/new "authentication required"
	// is authenticated with its first method of type env_var whose
	// variables are all among them (e.g. OPENAI_API_KEY).
	EnvVars []string
	// OnSession is called with the agent's session id once a session is
	// set up (new or loaded), so the host can keep it for a later resume.
	OnSession func(id string)
	// Mode and Model are the conversation's choices of the agent's mode
	// and model ("" = the agent's own), asked for before the first prompt
	// of a session when the agent offers them (choices.go).
	Mode, Model string
	// BilledCost is the session's cumulative cost (USD) already counted
	// in turns, when the agent reported one, for a loaded session;
	// OnBilled is called with the new figure after each turn that adds
	// to it, so the host can keep it for a later resume (usage.go).
	BilledCost float64
	OnBilled   func(cost float64)
	// MCPServers are the stdio MCP servers the agent is to start for the
	// session: the mcpServers of session/new and session/load (none when
	// empty). The bridge's own tools reach the agent this way.
	MCPServers []StdioServer
	// Emit receives every event, in order, under the client's lock: it
	// must not call the client.
	Emit func(streamjson.Event)
	Log  *slog.Logger
}

// phase is where the client is in setting up the session.
type phase int

const (
	phaseInit    phase = iota // initialize sent
	phaseSession              // session/new or session/load sent
	phaseReady                // a session is set up: prompts may go
	phaseFailed               // setting up failed: every message gets an error result
)

// Client is the client side of one ACP connection (see the package
// comment). All methods are safe for concurrent use.
type Client struct {
	cfg Config

	mu       sync.Mutex
	out      [][]byte      // lines to write, in order
	wake     chan struct{} // capacity 1: out has lines
	nextID   int64
	calls    map[int64]string // our request id → method
	phase    phase
	ready    chan struct{} // closed when phase leaves phaseInit/phaseSession
	setupErr error
	loading  bool // session/load runs: its history replay is not news

	sessionID  string       // the agent's session id
	auth       []authMethod // initialize's authMethods
	authed     bool         // authenticate was tried
	setupHint  string       // what to do about a failed set-up ("" = nothing known)
	retryLoad  bool         // authenticate answered session/load: load again after it
	settling   bool         // after session/load: history replay may still come (settle.go)
	settle     settleTimer
	loadable   bool // agentCapabilities.loadSession
	images     bool // promptCapabilities.image
	queue      []streamjson.UserMessage
	prompt     int64    // id of the running session/prompt, 0 = none
	running    []string // uuids of the messages the running prompt carries
	began      time.Time
	cancelled  bool   // Cancel was called for the running prompt
	block      []byte // the agent's text since its last tool call
	perms      map[string]pendingPermission
	tools      map[string]*toolState
	planN      int
	badLines   int
	noticedBad bool
	modes      selector             // the session's modes (choices.go)
	models     selector             // the session's models
	choosing   map[int64]choiceCall // switches asked for, by request id
	usage      usageState           // cost reported so far (usage.go)
}

// pendingPermission is a permission request waiting for Respond.
type pendingPermission struct {
	id      json.RawMessage // the agent's request id, verbatim
	options []permissionOption
}

// New returns a client for cfg; Start begins the conversation.
func New(cfg Config) *Client {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Emit == nil {
		cfg.Emit = func(streamjson.Event) {}
	}
	return &Client{
		cfg:   cfg,
		wake:  make(chan struct{}, 1),
		calls: map[int64]string{},
		ready: make(chan struct{}),
		perms: map[string]pendingPermission{},
		tools: map[string]*toolState{},

		choosing: map[int64]choiceCall{},
	}
}

// Start queues the initialize request: the first line the agent reads.
func (c *Client) Start() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.call("initialize", map[string]any{
		"protocolVersion": ProtocolVersion,
		// The bridge serves no file system and no terminal: the agent
		// works on its own files, inside its sandbox.
		"clientCapabilities": map[string]any{
			"fs":       map[string]bool{"readTextFile": false, "writeTextFile": false},
			"terminal": false,
		},
		"clientInfo": map[string]string{"name": "agentbridge", "version": "1"},
	})
}

// Wake has a value when lines are waiting for Take.
func (c *Client) Wake() <-chan struct{} { return c.wake }

// Take returns the lines queued for the agent, oldest first, and forgets
// them. The host writes them in this order.
func (c *Client) Take() [][]byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.out
	c.out = nil
	return out
}

// Ready is closed once the session is set up, or setting it up failed
// (Err says why).
func (c *Client) Ready() <-chan struct{} { return c.ready }

// Err is why setting the session up failed, or nil.
func (c *Client) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.setupErr
}

// AgentSessionID is the agent's session id ("" until set up).
func (c *Client) AgentSessionID() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sessionID
}

// queue adds a line to write. c.mu is held.
func (c *Client) write(l []byte) {
	c.out = append(c.out, l)
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// call queues a request and remembers its method. c.mu is held.
func (c *Client) call(method string, params any) int64 {
	c.nextID++
	c.calls[c.nextID] = method
	c.write(request(c.nextID, method, params))
	return c.nextID
}

// emit hands an event to the host. c.mu is held.
func (c *Client) emit(ev streamjson.Event) { c.cfg.Emit(ev) }

// notice emits a Notice of level (warning or error) the core shows.
func (c *Client) notice(level, tag, text string) {
	c.emit(streamjson.Notice{Level: level, Tag: tag, Text: text})
}

// Send queues a user message: it goes out as a prompt at once when the
// session is set up and no prompt runs, else with the next prompt (a
// Lifecycle "queued" says so).
func (c *Client) Send(m streamjson.UserMessage) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.queue = append(c.queue, m)
	switch {
	case c.phase == phaseFailed:
		c.failQueued()
	case c.phase == phaseReady && c.prompt == 0 && !c.settling:
		c.startPrompt()
	default:
		c.emit(streamjson.Lifecycle{UUID: m.UUID, State: streamjson.LifecycleQueued})
	}
	return nil
}

// startPrompt sends every queued message as one session/prompt. c.mu is
// held; the session is ready and no prompt runs.
func (c *Client) startPrompt() {
	if len(c.queue) == 0 {
		return
	}
	var blocks []contentBlock
	c.running = c.running[:0]
	for i, m := range c.queue {
		if i > 0 {
			blocks = append(blocks, contentBlock{Type: "text", Text: "\n\n"})
		}
		if m.Text != "" {
			blocks = append(blocks, contentBlock{Type: "text", Text: m.Text})
		}
		for _, img := range m.Images {
			if c.images {
				blocks = append(blocks, contentBlock{Type: "image", MimeType: img.MediaType, Data: base64.StdEncoding.EncodeToString(img.Data)})
			} else {
				blocks = append(blocks, contentBlock{Type: "text", Text: "[an image was attached, but this agent does not take images]"})
			}
		}
		c.running = append(c.running, m.UUID)
	}
	c.queue = nil
	c.prompt = c.call("session/prompt", map[string]any{"sessionId": c.sessionID, "prompt": blocks})
	c.began = time.Now()
	c.cancelled = false
	c.block = c.block[:0]
	c.emit(streamjson.Init{SessionID: c.cfg.SessionID, CWD: c.cfg.CWD})
	for _, u := range c.running {
		c.emit(streamjson.Lifecycle{UUID: u, State: streamjson.LifecycleStarted})
	}
}

// failQueued answers every queued message with an error result: the
// session could not be set up. c.mu is held.
func (c *Client) failQueued() {
	if len(c.queue) == 0 {
		return
	}
	msg := fmt.Sprintf("The agent could not start a session: %v", c.setupErr)
	for _, m := range c.queue {
		c.emit(streamjson.Init{SessionID: c.cfg.SessionID, CWD: c.cfg.CWD})
		c.emit(streamjson.Lifecycle{UUID: m.UUID, State: streamjson.LifecycleStarted})
		c.emit(streamjson.Result{Subtype: "error_during_execution", IsError: true, Text: msg, Errors: []string{msg}, SessionID: c.cfg.SessionID, NoCost: true})
		c.emit(streamjson.Lifecycle{UUID: m.UUID, State: streamjson.LifecycleCompleted})
	}
	c.queue = nil
}

// Cancel asks the agent to stop the running prompt (session/cancel): the
// pending permission requests are answered "cancelled" and withdrawn
// (PermissionCancelled); the prompt's response, with stop reason
// cancelled, ends the turn. It reports whether a prompt was running.
func (c *Client) Cancel() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.prompt == 0 {
		return false
	}
	c.cancelled = true
	c.write(notification("session/cancel", map[string]string{"sessionId": c.sessionID}))
	for _, id := range sortedKeys(c.perms) {
		p := c.perms[id]
		delete(c.perms, id)
		c.write(response(p.id, cancelledOutcome()))
		c.emit(streamjson.PermissionCancelled{RequestID: id})
	}
	return true
}

// Handle processes one line the agent wrote.
func (c *Client) Handle(l []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var m message
	if err := json.Unmarshal(l, &m); err != nil || m.JSONRPC != "2.0" {
		if err == nil {
			err = fmt.Errorf("not JSON-RPC 2.0 (jsonrpc %q)", m.JSONRPC)
		}
		c.badLine(l, err)
		return
	}
	switch {
	case m.Method != "" && len(m.ID) > 0:
		c.onRequest(m)
	case m.Method != "":
		c.onNotification(m)
	case len(m.ID) > 0:
		c.onResponse(m)
	default:
		c.badLine(l, errors.New("neither a request, a notification nor a response"))
	}
}

// badLine reports a line that is not JSON-RPC: logged and passed on as a
// DecodeError, and said once in the conversation. c.mu is held.
func (c *Client) badLine(l []byte, err error) {
	c.badLines++
	c.emit(streamjson.DecodeError{Line: append([]byte(nil), l[:min(len(l), 256)]...), Err: err})
	if !c.noticedBad {
		c.noticedBad = true
		c.notice("warning", "acp_malformed", "The agent wrote something that is not JSON-RPC; it was ignored (see the bridge's log).")
	}
}

// onRequest answers a request of the agent. c.mu is held.
func (c *Client) onRequest(m message) {
	switch m.Method {
	case "session/request_permission":
		c.onPermission(m)
	default:
		// fs/*, terminal/* and anything else: this client advertised
		// none of them; an error answers at once so the agent never waits.
		c.cfg.Log.Info("acp agent request not supported: refused", "method", m.Method)
		c.write(errorResponse(m.ID, codeMethodNotFound, "method not supported by this client: "+m.Method))
	}
}

// onNotification handles a notification of the agent. c.mu is held.
func (c *Client) onNotification(m message) {
	if m.Method != "session/update" {
		c.emit(streamjson.Unknown{Type: "acp", Subtype: m.Method, Raw: append(json.RawMessage(nil), m.Params...)})
		return
	}
	if c.onChoiceUpdate(m.Params) || c.onUsageUpdate(m.Params) {
		return
	}
	if c.loading { // session/load replays the history: the conversation has it
		return
	}
	if c.settling {
		c.quiet() // more of the replay (settle.go)
		return
	}
	c.onUpdate(m.Params)
}

// onResponse handles the answer to one of our requests. c.mu is held.
func (c *Client) onResponse(m message) {
	id, err := strconv.ParseInt(string(m.ID), 10, 64)
	method, ok := c.calls[id]
	if err != nil || !ok {
		c.cfg.Log.Warn("acp response to no request of ours: ignored", "id", string(m.ID))
		return
	}
	delete(c.calls, id)
	var rerr error
	if m.Error != nil {
		rerr = m.Error
	}
	if call, ok := c.choosing[id]; ok {
		delete(c.choosing, id)
		c.onChosen(call, m.Result, rerr)
		return
	}
	switch method {
	case "initialize":
		c.onInitialized(m.Result, rerr)
	case "session/new", "session/load":
		if m.Error != nil && m.Error.Code == codeAuthRequired && !c.authed && c.authenticate(method) {
			return
		}
		c.onSession(method, m.Result, rerr)
	case "authenticate":
		if rerr != nil {
			c.fail(fmt.Errorf("authenticate: %w", rerr))
			return
		}
		if c.cfg.Resume && c.loadable && c.cfg.LoadID != "" && c.sessionID == "" && c.retryLoad {
			c.loading = true
			c.call("session/load", map[string]any{"sessionId": c.cfg.LoadID, "cwd": c.cfg.CWD, "mcpServers": c.mcpServers()})
			return
		}
		c.newSession()
	case "session/prompt":
		c.onPromptDone(id, m.Result, rerr)
	}
}

// onInitialized reads the agent's capabilities and sets up the session.
func (c *Client) onInitialized(result json.RawMessage, err error) {
	if err != nil {
		c.fail(fmt.Errorf("initialize: %w", err))
		return
	}
	var r struct {
		ProtocolVersion   int          `json:"protocolVersion"`
		AuthMethods       []authMethod `json:"authMethods"`
		AgentCapabilities struct {
			LoadSession        bool `json:"loadSession"`
			PromptCapabilities struct {
				Image bool `json:"image"`
			} `json:"promptCapabilities"`
		} `json:"agentCapabilities"`
	}
	if err := json.Unmarshal(result, &r); err != nil {
		c.fail(fmt.Errorf("initialize: bad result: %w", err))
		return
	}
	if r.ProtocolVersion != ProtocolVersion {
		c.fail(fmt.Errorf("initialize: the agent speaks ACP version %d, this bridge version %d", r.ProtocolVersion, ProtocolVersion))
		return
	}
	c.auth = r.AuthMethods
	c.loadable = r.AgentCapabilities.LoadSession
	c.images = r.AgentCapabilities.PromptCapabilities.Image
	c.phase = phaseSession
	if c.cfg.Resume {
		switch {
		case c.cfg.LoadID == "":
			c.notice("warning", "acp_no_resume", "The agent's earlier session is not known to the bridge: this conversation starts a fresh session with the agent (it does not remember the earlier messages).")
		case !c.loadable:
			c.notice("warning", "acp_no_resume", "This agent cannot resume a session (it does not offer session/load): this conversation starts a fresh session with the agent (it does not remember the earlier messages).")
		default:
			c.loading = true
			c.call("session/load", map[string]any{"sessionId": c.cfg.LoadID, "cwd": c.cfg.CWD, "mcpServers": c.mcpServers()})
			return
		}
	}
	c.newSession()
}

// newSession queues session/new. c.mu is held.
func (c *Client) newSession() {
	c.call("session/new", map[string]any{"cwd": c.cfg.CWD, "mcpServers": c.mcpServers()})
}

// onSession completes session/new or session/load.
func (c *Client) onSession(method string, result json.RawMessage, err error) {
	if method == "session/load" {
		c.loading = false
		if err != nil {
			c.notice("warning", "acp_no_resume", fmt.Sprintf("The agent could not resume its earlier session (%v): this conversation starts a fresh session with the agent.", err))
			c.newSession()
			return
		}
		c.sessionID = c.cfg.LoadID
	} else {
		var r struct {
			SessionID string `json:"sessionId"`
		}
		if err == nil {
			if jerr := json.Unmarshal(result, &r); jerr != nil || r.SessionID == "" {
				err = fmt.Errorf("no sessionId in %s", textcut.Truncate(string(result), 200))
			}
		}
		if err != nil {
			c.fail(fmt.Errorf("session/new: %w", err))
			return
		}
		c.sessionID = r.SessionID
	}
	c.sessionChoices(result)
	c.usage.billed = 0
	switch {
	case method == "session/load":
		c.usage.billed = c.cfg.BilledCost
	case c.cfg.BilledCost != 0 && c.cfg.OnBilled != nil:
		c.cfg.OnBilled(0) // a new session: nothing of it counted yet
	}
	c.phase = phaseReady
	close(c.ready)
	if c.cfg.OnSession != nil {
		c.cfg.OnSession(c.sessionID)
	}
	c.cfg.Log.Info("acp session ready", "agent_session", c.sessionID, "loaded", method == "session/load",
		"mode", c.modes.Current, "model", c.models.Current)
	c.applyWanted() // before any prompt
	if method == "session/load" {
		// Some agents (Gemini CLI) go on replaying the history after
		// answering session/load: hold the first prompt until the replay
		// has been quiet for a moment (settle.go).
		c.beginSettle()
		return
	}
	c.startPrompt()
}

// fail ends the set-up: the conversation is told, queued messages get an
// error result. c.mu is held.
func (c *Client) fail(err error) {
	if c.setupHint != "" {
		err = fmt.Errorf("%w (%s)", err, c.setupHint)
	}
	c.setupErr = err
	c.phase = phaseFailed
	close(c.ready)
	c.cfg.Log.Warn("acp session set-up failed", "err", err)
	c.notice("error", "acp_setup_failed", fmt.Sprintf("The agent could not start a session: %v", err))
	c.failQueued()
}

// onPromptDone ends the turn: the Result, then the messages' receipts,
// then the next prompt if messages were queued meanwhile.
func (c *Client) onPromptDone(id int64, result json.RawMessage, err error) {
	if id != c.prompt {
		return
	}
	var r struct {
		StopReason string `json:"stopReason"`
	}
	if err == nil {
		_ = json.Unmarshal(result, &r) // a missing stop reason is an end of turn
	}
	c.flushText()
	res := streamjson.Result{Subtype: "success", Text: string(c.block), SessionID: c.cfg.SessionID, NumTurns: 1,
		Duration: time.Since(c.began), StopReason: r.StopReason}
	c.turnUsage(&res, result)
	state := streamjson.LifecycleCompleted
	switch {
	case err != nil:
		res.Subtype, res.IsError = "error_during_execution", true
		res.Errors = []string{err.Error()}
		res.Text = "The agent failed: " + err.Error()
	case c.cancelled:
		res.Subtype, res.IsError = "error_during_execution", true
		res.Errors = []string{"cancelled"}
	case r.StopReason == "cancelled":
		// The agent ended the turn itself (codex-acp does when a command
		// is denied): not a failure, and said when it said nothing else.
		if len(c.block) == 0 {
			res.Text = "(The agent ended the turn.)"
		}
	case r.StopReason == "refusal":
		res.IsError = true
		res.Errors = []string{"the agent refused to continue"}
	case r.StopReason == "max_tokens" || r.StopReason == "max_turn_requests":
		res.Subtype = "error_max_turns"
		res.IsError = true
		res.Errors = []string{"stopped: " + r.StopReason}
	}
	running := c.running
	c.prompt, c.running, c.cancelled = 0, nil, false
	for id, p := range c.perms { // a prompt's requests end with it
		delete(c.perms, id)
		c.write(response(p.id, cancelledOutcome()))
		c.emit(streamjson.PermissionCancelled{RequestID: id})
	}
	c.emit(res)
	for _, u := range running {
		c.emit(streamjson.Lifecycle{UUID: u, State: state})
	}
	c.block = c.block[:0]
	c.startPrompt()
}
