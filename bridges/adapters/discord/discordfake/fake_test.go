package discordfake

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// These tests check the fake against Discord's documented wire behaviour
// with a raw websocket and plain HTTP, independently of discordgo.

type frame struct {
	Op int             `json:"op"`
	D  json.RawMessage `json:"d"`
	S  *int64          `json:"s"`
	T  *string         `json:"t"`
}

// dialGateway opens a raw gateway connection to f and checks its first
// frame is HELLO.
func dialGateway(t *testing.T, f *Fake) *websocket.Conn {
	t.Helper()
	ws, _, err := websocket.DefaultDialer.Dial(f.GatewayURL()+"/?v=9&encoding=json", nil)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { ws.Close() })
	if hello := readFrame(t, ws); hello.Op != opHello || !strings.Contains(string(hello.D), "heartbeat_interval") {
		t.Fatalf("first frame = %+v, want HELLO", hello)
	}
	return ws
}

// readFrame reads the next gateway frame, failing t after 5 s.
func readFrame(t *testing.T, ws *websocket.Conn) frame {
	t.Helper()
	_ = ws.SetReadDeadline(time.Now().Add(5 * time.Second))
	var fr frame
	if err := ws.ReadJSON(&fr); err != nil {
		t.Fatalf("read: %v", err)
	}
	return fr
}

func send(t *testing.T, ws *websocket.Conn, op int, d any) {
	t.Helper()
	if err := ws.WriteJSON(map[string]any{"op": op, "d": d}); err != nil {
		t.Fatalf("write: %v", err)
	}
}

func identify(t *testing.T, f *Fake, ws *websocket.Conn, intents int) (session string) {
	t.Helper()
	send(t, ws, opIdentify, map[string]any{"token": "Bot " + f.Token(), "intents": intents, "properties": map[string]string{}})
	ready := readFrame(t, ws)
	if ready.T == nil || *ready.T != "READY" || ready.S == nil || *ready.S != 1 {
		t.Fatalf("after IDENTIFY got %+v, want READY with s=1", ready)
	}
	var d struct {
		SessionID        string   `json:"session_id"`
		ResumeGatewayURL string   `json:"resume_gateway_url"`
		User             wireUser `json:"user"`
	}
	if err := json.Unmarshal(ready.D, &d); err != nil || d.SessionID == "" || d.ResumeGatewayURL == "" || d.User.ID != f.BotID() || !d.User.Bot {
		t.Fatalf("READY = %s (%v)", ready.D, err)
	}
	return d.SessionID
}

func closeCode(t *testing.T, ws *websocket.Conn) int {
	t.Helper()
	_ = ws.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, _, err := ws.ReadMessage()
	var ce *websocket.CloseError
	if !errors.As(err, &ce) {
		t.Fatalf("read = %v, want a close frame", err)
	}
	return ce.Code
}

func TestGatewayHandshakeAndResume(t *testing.T) {
	t.Parallel()
	f := New(t)
	ws := dialGateway(t, f)
	sid := identify(t, f, ws, IntentMessageContent)

	send(t, ws, opHeartbeat, 1)
	if ack := readFrame(t, ws); ack.Op != opHeartbeatACK {
		t.Fatalf("heartbeat answer = %+v, want op 11", ack)
	}
	f.SendMessage("c1", "g1", "u1", "first", true)
	ev := readFrame(t, ws)
	if *ev.T != "MESSAGE_CREATE" || *ev.S != 2 || !strings.Contains(string(ev.D), `"content":"\u003c@`+f.BotID()+`\u003e first"`) {
		t.Fatalf("event = %s %s", *ev.T, ev.D)
	}

	// Disconnect, miss an event, resume from s=2.
	ws.Close()
	if err := f.WaitGateway(func(s GatewayStats) bool { return s.Live == 0 }, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	f.SendMessage("c1", "g1", "u1", "missed", false)
	ws2 := dialGateway(t, f)
	send(t, ws2, opResume, map[string]any{"token": "Bot " + f.Token(), "session_id": sid, "seq": 2})
	missed := readFrame(t, ws2)
	if *missed.T != "MESSAGE_CREATE" || *missed.S != 3 || !strings.Contains(string(missed.D), "missed") {
		t.Fatalf("replay = %+v %s", missed, missed.D)
	}
	if resumed := readFrame(t, ws2); *resumed.T != "RESUMED" || *resumed.S != 4 {
		t.Fatalf("after replay got %+v, want RESUMED s=4", resumed)
	}

	// An unknown session cannot be resumed.
	ws3 := dialGateway(t, f)
	send(t, ws3, opResume, map[string]any{"token": "Bot " + f.Token(), "session_id": "nope", "seq": 1})
	if inv := readFrame(t, ws3); inv.Op != opInvalidSession || string(inv.D) != "false" {
		t.Fatalf("got %+v, want op 9 false", inv)
	}
	if st := f.GatewayStats(); st.Identifies != 1 || st.Resumes != 1 || st.InvalidSessions != 1 || st.Heartbeats != 1 {
		t.Errorf("stats = %+v", st)
	}
}

func TestGatewayCloseCodes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		opts    Options
		token   string
		intents int
		want    int
	}{
		{"bad token", Options{}, "Bot wrong", 0, CloseAuthenticationFailed},
		{"message content denied", Options{DenyMessageContent: true}, "", IntentMessageContent, CloseDisallowedIntents},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := NewWithOptions(t, tc.opts)
			ws := dialGateway(t, f)
			token := tc.token
			if token == "" {
				token = "Bot " + f.Token()
			}
			send(t, ws, opIdentify, map[string]any{"token": token, "intents": tc.intents})
			if code := closeCode(t, ws); code != tc.want {
				t.Errorf("close code = %d, want %d", code, tc.want)
			}
		})
	}
	t.Run("injected", func(t *testing.T) {
		f := New(t)
		ws := dialGateway(t, f)
		identify(t, f, ws, 0)
		f.CloseWith(CloseDisallowedIntents)
		if code := closeCode(t, ws); code != CloseDisallowedIntents {
			t.Errorf("close code = %d", code)
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		if len(f.sessions) != 0 {
			t.Error("a 4014 close left the session resumable")
		}
	})
}

func do(t *testing.T, f *Fake, method, route string, body any) (*http.Response, apiError) {
	t.Helper()
	var r io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		r = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, strings.TrimSuffix(f.URL(), "/")+route, r)
	req.Header.Set("Authorization", "Bot "+f.Token())
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var e apiError
	_ = json.NewDecoder(resp.Body).Decode(&e)
	return resp, e
}

func buttonRow(ids ...string) map[string]any {
	var bs []map[string]any
	for _, id := range ids {
		bs = append(bs, map[string]any{"type": 2, "style": 1, "label": "L", "custom_id": id})
	}
	return map[string]any{"type": 1, "components": bs}
}

func TestRESTValidation(t *testing.T) {
	t.Parallel()
	f := New(t)
	f.SendMessage("c1", "g1", "u1", "hello", false)
	rows := func(n int) []any {
		var out []any
		for i := range n {
			out = append(out, buttonRow(string(rune('a'+i))))
		}
		return out
	}
	tests := []struct {
		name   string
		body   map[string]any
		status int
		code   int
	}{
		{"ok", map[string]any{"content": "hi"}, 200, 0},
		{"2000 characters", map[string]any{"content": strings.Repeat("é", 2000)}, 200, 0},
		{"2001 characters", map[string]any{"content": strings.Repeat("é", 2001)}, 400, codeInvalidFormBody},
		{"empty", map[string]any{"content": ""}, 400, codeEmptyMessage},
		{"components only", map[string]any{"components": rows(1)}, 200, 0},
		{"six rows", map[string]any{"content": "x", "components": rows(6)}, 400, codeInvalidFormBody},
		{"six buttons in a row", map[string]any{"content": "x", "components": []any{buttonRow("a", "b", "c", "d", "e", "f")}}, 400, codeInvalidFormBody},
		{"duplicate custom_id", map[string]any{"content": "x", "components": []any{buttonRow("a", "a")}}, 400, codeInvalidFormBody},
		{"custom_id of 101", map[string]any{"content": "x", "components": []any{buttonRow(strings.Repeat("i", 101))}}, 400, codeInvalidFormBody},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, e := do(t, f, "POST", "/channels/c1/messages", tc.body)
			if resp.StatusCode != tc.status || e.Code != tc.code {
				t.Errorf("got %d code %d (%s), want %d code %d", resp.StatusCode, e.Code, e.Message, tc.status, tc.code)
			}
		})
	}
	t.Run("unknown channel", func(t *testing.T) {
		if resp, e := do(t, f, "POST", "/channels/nope/messages", map[string]any{"content": "x"}); resp.StatusCode != 404 || e.Code != codeUnknownChannel {
			t.Errorf("got %d %+v", resp.StatusCode, e)
		}
	})
	t.Run("no token", func(t *testing.T) {
		resp, err := http.Post(f.URL()+"channels/c1/messages", "application/json", strings.NewReader(`{"content":"x"}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 401 {
			t.Errorf("status = %d, want 401", resp.StatusCode)
		}
	})
	t.Run("thread twice", func(t *testing.T) {
		mid := f.SendMessage("c1", "g1", "u1", "start", true)
		if resp, _ := do(t, f, "POST", "/channels/c1/messages/"+mid+"/threads", map[string]any{"name": "t"}); resp.StatusCode != 201 {
			t.Fatalf("first thread: %d", resp.StatusCode)
		}
		if resp, e := do(t, f, "POST", "/channels/c1/messages/"+mid+"/threads", map[string]any{"name": "t"}); resp.StatusCode != 400 || e.Code != codeThreadAlreadyCreated {
			t.Errorf("second thread: %d %+v", resp.StatusCode, e)
		}
		if th := f.Threads(); len(th) != 1 || th[0].ID != mid || th[0].ParentID != "c1" {
			t.Errorf("threads = %+v", th)
		}
	})
}

func TestInjected429(t *testing.T) {
	t.Parallel()
	f := NewWithOptions(t, Options{RetryAfter: 1500 * time.Millisecond})
	f.SendMessage("c1", "g1", "u1", "hello", false)
	f.Inject429(RouteCreateMessage, 1)
	resp, _ := do(t, f, "POST", "/channels/c1/messages", map[string]any{"content": "x"})
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "2" || resp.Header.Get("X-RateLimit-Reset-After") != "1.500" || resp.Header.Get("X-RateLimit-Remaining") != "0" {
		t.Errorf("429 response: %d %v", resp.StatusCode, resp.Header)
	}
	if resp, _ := do(t, f, "POST", "/channels/c1/messages", map[string]any{"content": "x"}); resp.StatusCode != 200 {
		t.Errorf("after the injected 429: %d", resp.StatusCode)
	}
	if n := f.RequestCount(RouteCreateMessage); n != 2 {
		t.Errorf("requests = %d", n)
	}
}

func TestOutage(t *testing.T) {
	t.Parallel()
	f := New(t)
	f.SendMessage("c1", "g1", "u1", "hello", false)
	f.SetOutage(503, RouteCreateMessage)
	for range 3 {
		if resp, _ := do(t, f, "POST", "/channels/c1/messages", map[string]any{"content": "x"}); resp.StatusCode != 503 {
			t.Errorf("during the outage: %d, want 503", resp.StatusCode)
		}
	}
	if n := len(f.Messages("c1")); n != 1 {
		t.Errorf("the outage posted %d messages", n-1)
	}
	f.SetOutage(0)
	if resp, _ := do(t, f, "POST", "/channels/c1/messages", map[string]any{"content": "x"}); resp.StatusCode != 200 {
		t.Errorf("after the outage: %d", resp.StatusCode)
	}
	if n := f.RequestCount(RouteCreateMessage); n != 4 {
		t.Errorf("requests = %d, want 4 recorded", n)
	}
}

func TestInteractionWindow(t *testing.T) {
	t.Parallel()
	f := New(t)
	f.SendMessage("c1", "g1", "u1", "hello", false)
	resp, _ := do(t, f, "POST", "/channels/c1/messages", map[string]any{"content": "card", "components": []any{buttonRow("c:1:yes")}})
	if resp.StatusCode != 200 {
		t.Fatal(resp.Status)
	}
	card := f.BotMessages()[0]

	// In time: acknowledged once; a second answer is refused.
	iid := f.Click("c1", card.ID, "u2", "c:1:yes")
	f.mu.Lock()
	token := f.interactions[iid].wire.Token
	f.mu.Unlock()
	cb := map[string]any{"type": CallbackDeferredUpdate}
	if resp, _ := do(t, f, "POST", "/interactions/"+iid+"/"+token+"/callback", cb); resp.StatusCode != 204 {
		t.Errorf("ack: %d", resp.StatusCode)
	}
	if resp, e := do(t, f, "POST", "/interactions/"+iid+"/"+token+"/callback", cb); resp.StatusCode != 400 || e.Code != codeAlreadyAcknowledged {
		t.Errorf("second ack: %d %+v", resp.StatusCode, e)
	}
	if resp, _ := do(t, f, "POST", "/webhooks/"+f.AppID()+"/"+token+"?wait=true", map[string]any{"content": "private", "flags": FlagEphemeral}); resp.StatusCode != 200 {
		t.Errorf("followup: %d", resp.StatusCode)
	}
	if fu := f.Followups(); len(fu) != 1 || !fu[0].Ephemeral() {
		t.Errorf("followups = %+v", fu)
	}

	// Too late: Discord has forgotten the interaction after 3 s.
	late := f.Click("c1", card.ID, "u2", "c:1:yes")
	f.mu.Lock()
	f.interactions[late].clickedAt = time.Now().Add(-InteractionTimeout - time.Millisecond)
	ltoken := f.interactions[late].wire.Token
	f.mu.Unlock()
	if resp, e := do(t, f, "POST", "/interactions/"+late+"/"+ltoken+"/callback", cb); resp.StatusCode != 404 || e.Code != codeUnknownInteraction {
		t.Errorf("late ack: %d %+v", resp.StatusCode, e)
	}
	if r := f.InteractionResponses(); len(r) != 2 || r[0].Late || !r[1].Late {
		t.Errorf("responses = %+v", r)
	}
}

// GET /gateway needs no token, but one that is sent must be right; a reset
// token closes live connections with 4004 and is refused from then on.
func TestGatewayTokenChecks(t *testing.T) {
	t.Parallel()
	f := New(t)
	get := func(auth string) int {
		t.Helper()
		req, _ := http.NewRequest("GET", f.URL()+"gateway", nil)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := get(""); got != 200 {
		t.Errorf("GET /gateway without a token: %d, want 200", got)
	}
	if got := get("Bot " + f.Token()); got != 200 {
		t.Errorf("GET /gateway with the token: %d, want 200", got)
	}
	if got := get("Bot wrong"); got != 401 {
		t.Errorf("GET /gateway with a bad token: %d, want 401", got)
	}

	ws := dialGateway(t, f)
	old := f.Token()
	identify(t, f, ws, 0)
	f.ResetToken("the-new-token")
	if code := closeCode(t, ws); code != CloseAuthenticationFailed {
		t.Errorf("close code after a token reset = %d, want 4004", code)
	}
	if got := get("Bot " + old); got != 401 {
		t.Errorf("GET /gateway with the old token: %d, want 401", got)
	}
	ws2 := dialGateway(t, f)
	send(t, ws2, opIdentify, map[string]any{"token": "Bot " + old})
	if code := closeCode(t, ws2); code != CloseAuthenticationFailed {
		t.Errorf("IDENTIFY with the old token: close %d, want 4004", code)
	}
}

// RefuseGateway fails handshakes (n of them, or all) with HTTP 502.
func TestRefuseGateway(t *testing.T) {
	t.Parallel()
	f := New(t)
	f.RefuseGateway(2)
	for i := range 2 {
		_, resp, err := websocket.DefaultDialer.Dial(f.GatewayURL(), nil)
		if err == nil || resp == nil || resp.StatusCode != http.StatusBadGateway {
			t.Fatalf("handshake %d: err %v, response %v; want a 502", i, err, resp)
		}
		resp.Body.Close()
	}
	dialGateway(t, f) // the third is accepted
	f.RefuseGateway(-1)
	if _, resp, err := websocket.DefaultDialer.Dial(f.GatewayURL(), nil); err == nil || resp.StatusCode != http.StatusBadGateway {
		t.Fatalf("RefuseGateway(-1) let a handshake through")
	} else {
		resp.Body.Close()
	}
	if st := f.GatewayStats(); st.Refused != 3 || st.Connections != 1 {
		t.Errorf("stats = %+v, want 3 refused and 1 connection", st)
	}
}

// FailGatewayLookup answers GET /gateway with 503 (n times, or all).
func TestFailGatewayLookup(t *testing.T) {
	t.Parallel()
	f := New(t)
	get := func() int {
		resp, err := http.Get(f.URL() + "gateway")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	f.FailGatewayLookup(2)
	if a, b, c := get(), get(), get(); a != http.StatusServiceUnavailable || b != http.StatusServiceUnavailable || c != http.StatusOK {
		t.Errorf("GET /gateway answered %d, %d, %d; want 503, 503, 200", a, b, c)
	}
	f.FailGatewayLookup(-1)
	if get() != http.StatusServiceUnavailable {
		t.Error("FailGatewayLookup(-1) let a lookup through")
	}
}
