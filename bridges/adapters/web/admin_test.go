package web

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/adapters/web/auth"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/config/profile"
	"github.com/agentbridge/agentbridge/store"
)

// fakeOperator records what the operator pages ask of the core.
type fakeOperator struct {
	mu      sync.Mutex
	calls   []string
	live    []bridges.LiveAgent
	decideE error
	states  []bridges.BotStatus // BotStates; nil: team-slack failed
	spares  []bridges.WarmSpareState
}

func (f *fakeOperator) WarmSpares() []bridges.WarmSpareState {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.spares
}

func (f *fakeOperator) record(s string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, s)
}

func (f *fakeOperator) Calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

func (f *fakeOperator) BotStates() []bridges.BotStatus {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.states != nil {
		return f.states
	}
	return []bridges.BotStatus{{Bot: "team-slack", Platform: "slack", BotState: bridges.BotState{
		State: bridges.ConnFailed, Reason: "invalid_auth", Hint: "Set a valid bot token, then restart."}}}
}

func (f *fakeOperator) LiveAgents(context.Context) ([]bridges.LiveAgent, error) { return f.live, nil }

func (f *fakeOperator) StopAgent(_ context.Context, conv, by string) error {
	f.record("stop " + conv + " by " + by)
	return nil
}

func (f *fakeOperator) DecideApproval(_ context.Context, id, choice, by string) error {
	f.record("decide " + id + " " + choice + " by " + by)
	return f.decideE
}

const (
	slackSecret = "xoxb-very-secret-slack-token"
	apiSecret   = "sk-ant-very-secret-key"
)

// tokenSettings stands in for a chat platform's settings that hold secrets
// (web does not import the other adapters); like theirs, its formats
// redact them.
type tokenSettings struct{ BotToken, AppToken string }

func (s tokenSettings) String() string  { return "chat{bot_token:" + config.Redact(s.BotToken) + "}" }
func (s tokenSettings) Summary() string { return "" }
func (s tokenSettings) MarshalJSON() ([]byte, error) {
	return json.Marshal(map[string]string{"bot_token": config.Redact(s.BotToken), "app_token": config.Redact(s.AppToken)})
}

type adminHarness struct {
	srv      *httptest.Server
	c        *Console
	op       *fakeOperator
	st       *store.Store
	ana, bob *http.Client
	csrf     map[*http.Client]string
}

func newAdminHarness(t *testing.T) *adminHarness {
	t.Helper()
	dir := t.TempDir()
	cfg := &config.Config{
		Path:    filepath.Join(dir, "bridge.yaml"),
		DataDir: dir,
		HTTP:    config.HTTP{Listen: "127.0.0.1:0"},
		Agents: map[string]*profile.Agent{"coder": {Name: "coder", Command: "claude", Workdir: dir,
			Env: map[string]string{"ANTHROPIC_API_KEY": apiSecret}}},
		Bots: []*config.Bot{{Name: "team-slack", Platform: "slack", Agent: "coder",
			Settings: tokenSettings{BotToken: slackSecret, AppToken: "xapp-also-secret"}}},
		Web: config.Web{Users: []config.WebUser{{Name: "ana", Role: config.RoleAdmin, Token: anaToken}, {Name: "bob", Role: config.RoleUser, Token: bobToken}}},
	}
	st, err := store.Open(context.Background(), filepath.Join(dir, "bridge.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	c, err := New(Options{Config: cfg, Store: st})
	if err != nil {
		t.Fatal(err)
	}
	op := &fakeOperator{}
	c.SetOperator(op)
	srv := httptest.NewServer(c.Handler())
	t.Cleanup(srv.Close)
	h := &adminHarness{srv: srv, c: c, op: op, st: st, csrf: map[*http.Client]string{}}
	h.ana, h.bob = h.client(t, "ana"), h.client(t, "bob")
	return h
}

// client returns an HTTP client signed in as name (a session cookie
// issued by the console) that does not follow redirects.
func (h *adminHarness) client(t *testing.T, name string) *http.Client {
	t.Helper()
	value, err := h.c.sess.Issue(context.Background(), h.c.users.ByName(name))
	if err != nil {
		t.Fatal(err)
	}
	jar := &oneCookie{c: &http.Cookie{Name: auth.SessionCookie, Value: value}}
	cl := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	h.csrf[cl] = h.c.sess.Check(context.Background(), value).CSRF
	return cl
}

type oneCookie struct{ c *http.Cookie }

func (j *oneCookie) SetCookies(*url.URL, []*http.Cookie) {}
func (j *oneCookie) Cookies(*url.URL) []*http.Cookie     { return []*http.Cookie{j.c} }

func (h *adminHarness) get(t *testing.T, cl *http.Client, path string) (int, string) {
	t.Helper()
	resp, err := cl.Get(h.srv.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// post sends a form; withCSRF adds the client's token.
func (h *adminHarness) post(t *testing.T, cl *http.Client, path string, form url.Values, withCSRF bool) (int, string) {
	t.Helper()
	if form == nil {
		form = url.Values{}
	}
	if withCSRF {
		form.Set("csrf", h.csrf[cl])
	}
	resp, err := cl.PostForm(h.srv.URL+path, form)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("Location")
}

func TestAdminPagesAreForAdmins(t *testing.T) {
	h := newAdminHarness(t)
	for _, p := range []string{"/admin", "/admin/agents", "/admin/approvals", "/admin/usage", "/admin/audit", "/admin/config"} {
		if code, _ := h.get(t, h.bob, p); code != http.StatusForbidden {
			t.Errorf("user GET %s: %d, want 403", p, code)
		}
		if code, body := h.get(t, h.ana, p); code != http.StatusOK || !strings.Contains(body, `id="adminnav"`) {
			t.Errorf("admin GET %s: %d", p, code)
		}
	}
	if code, _ := h.post(t, h.bob, "/admin/agents/c1/stop", nil, true); code != http.StatusForbidden {
		t.Errorf("user POST stop: %d, want 403", code)
	}
	if code, _ := h.post(t, h.bob, "/admin/approvals/r1", url.Values{"choice": {"allow"}}, true); code != http.StatusForbidden {
		t.Errorf("user POST decide: %d, want 403", code)
	}
	if calls := h.op.Calls(); len(calls) != 0 {
		t.Errorf("a user reached the core: %v", calls)
	}
}

func TestAdminBotsShowState(t *testing.T) {
	h := newAdminHarness(t)
	_, body := h.get(t, h.ana, "/admin")
	for _, want := range []string{"team-slack", "failed", "invalid_auth", "Set a valid bot token, then restart."} {
		if !strings.Contains(body, want) {
			t.Errorf("bots page lacks %q", want)
		}
	}
}

// The bots page shows each bot's replies waiting out an outage and those
// given up in the last day, from the store.
func TestAdminBotsShowReplies(t *testing.T) {
	h := newAdminHarness(t)
	ctx := context.Background()
	conv, _, err := h.st.GetOrCreateConversation(ctx, store.ConversationKey{Bot: "team-slack", Channel: "C1", Thread: "1.2"}, "coder", "U1")
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{"waits", "waits too", "refused"} {
		m, err := h.st.AddOutbox(ctx, store.OutboxMessage{ConversationID: conv.ID, Text: text})
		if err != nil {
			t.Fatal(err)
		}
		if text == "refused" {
			if _, err := h.st.MarkOutboxFailed(ctx, m.ID, "channel_not_found"); err != nil {
				t.Fatal(err)
			}
		}
	}
	_, body := h.get(t, h.ana, "/admin")
	for _, want := range []string{"Replies waiting", `class="replies-waiting">2 (since <time`, `class="replies-failed error">1</td>`} {
		if !strings.Contains(body, want) {
			t.Errorf("bots page lacks %q:\n%s", want, body)
		}
	}
}

// A reconnecting bot shows since when (the start of the outage), the
// count of failed attempts and the last error.
func TestAdminBotsShowReconnecting(t *testing.T) {
	h := newAdminHarness(t)
	since := time.Date(2026, 3, 1, 9, 1, 0, 0, time.UTC)
	h.op.mu.Lock()
	h.op.states = []bridges.BotStatus{{Bot: "team-slack", Platform: "slack", BotState: bridges.BotState{
		State: bridges.ConnReconnecting, Reason: "apps.connections.open: HTTP 503", Attempt: 7, Since: since}}}
	h.op.mu.Unlock()
	_, body := h.get(t, h.ana, "/admin")
	for _, want := range []string{">reconnecting<", "7 failed attempts", "apps.connections.open: HTTP 503", since.Local().Format("2006-01-02 15:04")} {
		if !strings.Contains(body, want) {
			t.Errorf("bots page lacks %q", want)
		}
	}
}

// The live agents page shows each profile's warm spares: automatic or
// fixed, ready, starting, wanted, and why none start.
func TestAdminAgentsShowWarmSpares(t *testing.T) {
	h := newAdminHarness(t)
	_, body := h.get(t, h.ana, "/admin/agents")
	if strings.Contains(body, `id="spares"`) {
		t.Errorf("agents page shows a spares table without spares")
	}
	h.op.mu.Lock()
	h.op.spares = []bridges.WarmSpareState{
		{Profile: "coder", Auto: true, Target: 3, Max: 4, Ready: 2, Starting: 1},
		{Profile: "ops", Target: 1, MemShort: true},
	}
	h.op.mu.Unlock()
	_, body = h.get(t, h.ana, "/admin/agents")
	for _, want := range []string{`id="spares"`, `data-profile="coder"`, "auto (at most 4)", `data-label="Ready">2<`,
		`data-label="Starting">1<`, `data-label="Wanted">3<`, `data-profile="ops"`, "memory short"} {
		if !strings.Contains(body, want) {
			t.Errorf("agents page lacks %q", want)
		}
	}
}

func TestAdminAgentsStop(t *testing.T) {
	h := newAdminHarness(t)
	now := time.Now()
	h.op.live = []bridges.LiveAgent{{Key: bridges.ConversationKey{Bot: "team-slack", Channel: "C1", Thread: "1.2"},
		ConversationID: "conv-1", Profile: "coder", PID: 4242, Started: now.Add(-90 * time.Second), LastActive: now.Add(-30 * time.Second),
		RSSBytes: 210e6, BackgroundTasks: []string{"Sleep then create <bg>.txt"}}}
	_, body := h.get(t, h.ana, "/admin/agents")
	for _, want := range []string{"4242", "210 MB", "team-slack · C1 · 1.2", `action="/admin/agents/conv-1/stop"`, "1m30s",
		`</svg> Sleep then create &lt;bg&gt;.txt</li>`} { // the running background task (after its icon), escaped
		if !strings.Contains(body, want) {
			t.Errorf("agents page lacks %q", want)
		}
	}
	if code, _ := h.post(t, h.ana, "/admin/agents/conv-1/stop", nil, false); code != http.StatusForbidden {
		t.Errorf("stop without CSRF token: %d, want 403", code)
	}
	if calls := h.op.Calls(); len(calls) != 0 {
		t.Fatalf("a request without CSRF token reached the core: %v", calls)
	}
	code, loc := h.post(t, h.ana, "/admin/agents/conv-1/stop", nil, true)
	if code != http.StatusSeeOther || !strings.HasPrefix(loc, "/admin/agents?done=") {
		t.Errorf("stop: %d %q", code, loc)
	}
	if calls := h.op.Calls(); len(calls) != 1 || calls[0] != "stop conv-1 by ana" {
		t.Errorf("core calls %v", calls)
	}
}

func TestAdminApprovalsAuditUsage(t *testing.T) {
	h := newAdminHarness(t)
	ctx := context.Background()
	conv, _, err := h.st.GetOrCreateConversation(ctx, store.ConversationKey{Bot: "team-slack", Channel: "C9", Thread: "7.7"}, "coder", "U1")
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"req-open", "req-done"} {
		if _, err := h.st.RecordApprovalRequest(ctx, store.Approval{ID: id, ConversationID: conv.ID, ToolName: "Bash",
			Input: []byte(`{"command":"git push <origin>"}`), RequestedBy: "U1"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := h.st.RecordApprovalDecision(ctx, "req-done", store.DecisionDeny, "web:ana", "no"); err != nil {
		t.Fatal(err)
	}
	if err := h.st.AddUsage(ctx, store.Usage{ConversationID: conv.ID, CostUSD: 0.125, InputTokens: 1234}); err != nil {
		t.Fatal(err)
	}

	_, body := h.get(t, h.ana, "/admin/approvals")
	if !strings.Contains(body, `data-request="req-open"`) || strings.Contains(body, `data-request="req-done"`) {
		t.Errorf("pending page must list req-open only:\n%s", body)
	}
	if !strings.Contains(body, "git push &lt;origin&gt;") {
		t.Error("pending page lacks the (escaped) command")
	}
	code, loc := h.post(t, h.ana, "/admin/approvals/req-open", url.Values{"choice": {"allow"}}, true)
	if code != http.StatusSeeOther || !strings.Contains(loc, "done=") {
		t.Errorf("decide: %d %q", code, loc)
	}
	if calls := h.op.Calls(); len(calls) != 1 || calls[0] != "decide req-open allow by ana" {
		t.Errorf("core calls %v", calls)
	}
	h.op.decideE = errors.New("the request is no longer open")
	if _, loc := h.post(t, h.ana, "/admin/approvals/req-open", url.Values{"choice": {"deny"}}, true); !strings.Contains(loc, "error=") {
		t.Errorf("a failed decision redirected to %q, want an error notice", loc)
	}
	if _, body := h.get(t, h.ana, "/admin/approvals?error=the+request+is+no+longer+open"); !strings.Contains(body, "no longer open") {
		t.Error("the error notice is not shown")
	}

	_, body = h.get(t, h.ana, "/admin/audit")
	if !strings.Contains(body, `data-request="req-done"`) || !strings.Contains(body, "web:ana") || strings.Contains(body, `data-request="req-open"`) {
		t.Errorf("audit page must list the decided request with its decider:\n%s", body)
	}
	if !strings.Contains(body, `id="no-handoff-audit"`) {
		t.Errorf("audit page without hand-offs lacks its note:\n%s", body)
	}
	for _, ev := range []store.HandoffEvent{
		{Action: store.HandoffAttach, Request: "attach", Person: "ana", UserID: "U1", ConversationID: conv.ID, Key: conv.Key, Remote: "127.0.0.1:5001"},
		{Action: store.HandoffRefused, Request: "attach", Person: "bob", UserID: "U2", ConversationID: conv.ID, Key: conv.Key,
			Reason: "bob (U2) does not take part <here>", Remote: "127.0.0.1:5002"},
	} {
		if err := h.st.RecordHandoff(ctx, ev); err != nil {
			t.Fatal(err)
		}
	}
	_, body = h.get(t, h.ana, "/admin/audit")
	if !strings.Contains(body, `id="handoff-audit"`) || !strings.Contains(body, `data-action="attach"`) || !strings.Contains(body, `data-action="refused"`) ||
		!strings.Contains(body, "does not take part &lt;here&gt;") || !strings.Contains(body, "127.0.0.1:5002") {
		t.Errorf("audit page lacks the hand-off events (escaped):\n%s", body)
	}
	_, body = h.get(t, h.ana, "/admin/usage")
	if !strings.Contains(body, "0.1250") || !strings.Contains(body, "1234") || !strings.Contains(body, time.Now().UTC().Format("2006-01-02")) {
		t.Errorf("usage page lacks today's cost and tokens:\n%s", body)
	}
	if !strings.Contains(body, `id="no-feedback"`) {
		t.Errorf("usage page without ratings lacks its note:\n%s", body)
	}
	for _, f := range []store.Feedback{{ReplyID: "reply-1", UserID: "U1", Rating: store.RatingGood}, {ReplyID: "reply-1", UserID: "U2<x>", Rating: store.RatingBad}} {
		f.ConversationID = conv.ID
		if _, err := h.st.RecordFeedback(ctx, f); err != nil {
			t.Fatal(err)
		}
	}
	_, body = h.get(t, h.ana, "/admin/usage")
	if !strings.Contains(body, "</svg> 1 good · ") || !strings.Contains(body, `data-rating="bad"`) || !strings.Contains(body, "U2&lt;x&gt;") || !strings.Contains(body, `data-reply="reply-1"`) {
		t.Errorf("usage page lacks the ratings (escaped):\n%s", body)
	}
}

func TestAdminConfigRedactsSecrets(t *testing.T) {
	h := newAdminHarness(t)
	code, body := h.get(t, h.ana, "/admin/config")
	if code != http.StatusOK || !strings.Contains(body, "team-slack") || !strings.Contains(body, "ANTHROPIC_API_KEY") {
		t.Fatalf("config page: %d\n%s", code, body)
	}
	for _, secret := range []string{slackSecret, "xapp-also-secret", apiSecret, anaToken, bobToken} {
		if strings.Contains(body, secret) {
			t.Errorf("config page shows the secret %q", secret)
		}
	}
}
