package slackfake

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	slackapi "github.com/slack-go/slack"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func client(s *Server, botToken string) *slackapi.Client {
	return slackapi.New(botToken, slackapi.OptionAppLevelToken(AppToken), slackapi.OptionAPIURL(s.URL()),
		slackapi.OptionHTTPClient(&http.Client{Transport: &http.Transport{DisableKeepAlives: true}}))
}

// rawSocket opens a Socket Mode connection without slack-go's client, to
// look at the wire.
type rawSocket struct {
	t  *testing.T
	ws *websocket.Conn
}

// dialSocketMode opens a Socket Mode connection to s the way Slack
// hands one out (apps.connections.open, then the websocket).
func dialSocketMode(t *testing.T, s *Server) *rawSocket {
	t.Helper()
	_, url, err := client(s, BotToken).StartSocketModeContext(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(url, "ws://127.0.0.1:") {
		t.Fatalf("socket url %q", url)
	}
	ws, resp, err := websocket.DefaultDialer.Dial(url, http.Header{"Origin": {"https://api.slack.com"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	t.Cleanup(func() { ws.Close() })
	return &rawSocket{t: t, ws: ws}
}

// next reads the next JSON message.
func (r *rawSocket) next() map[string]any {
	r.t.Helper()
	_ = r.ws.SetReadDeadline(time.Now().Add(30 * time.Second)) // a bound for a failure only: a loaded CI machine took over 5 s
	var m map[string]any
	if err := r.ws.ReadJSON(&m); err != nil {
		r.t.Fatal(err)
	}
	return m
}

func (r *rawSocket) ack(id string) {
	r.t.Helper()
	if err := r.ws.WriteJSON(map[string]string{"envelope_id": id}); err != nil {
		r.t.Fatal(err)
	}
}

func TestSocketHelloPingsEnvelopesAcks(t *testing.T) {
	s := New(t, WithPingInterval(50*time.Millisecond))
	sock := dialSocketMode(t, s)
	pinged := make(chan struct{}, 1)
	sock.ws.SetPingHandler(func(string) error {
		select {
		case pinged <- struct{}{}:
		default:
		}
		return nil
	})
	if hello := sock.next(); hello["type"] != "hello" {
		t.Fatalf("first message %v, want hello", hello)
	}
	sent := s.Send(Msg{Channel: "C1", User: "U1", Text: "<@" + BotUserID + "> hi"})
	if len(sent.Envelopes) != 2 {
		t.Fatalf("mention sent %d envelopes, want message + app_mention", len(sent.Envelopes))
	}
	var types []string
	for range 2 {
		env := sock.next()
		if env["type"] != "events_api" {
			t.Fatalf("envelope %v", env)
		}
		payload := env["payload"].(map[string]any)
		ev := payload["event"].(map[string]any)
		if ev["ts"] != sent.TS || payload["type"] != "event_callback" {
			t.Errorf("event %v", ev)
		}
		types = append(types, ev["type"].(string))
		sock.ack(env["envelope_id"].(string))
	}
	if types[0] != "message" || types[1] != "app_mention" {
		t.Errorf("event order %v", types)
	}
	for _, id := range sent.Envelopes {
		if _, err := s.WaitForAck(id, time.Second); err != nil {
			t.Error(err)
		}
	}
	// gorilla handles pings inside reads: read until one arrives.
	go func() {
		for {
			if _, _, err := sock.ws.ReadMessage(); err != nil {
				return
			}
		}
	}()
	select {
	case <-pinged:
	case <-time.After(2 * time.Second):
		t.Error("no websocket ping from the fake")
	}
}

// An envelope written to a socket that died unacked is re-sent as a retry
// on the next connection; one sent while no socket was up is queued.
func TestSocketRedeliversUnacked(t *testing.T) {
	s := New(t)
	first := dialSocketMode(t, s)
	first.next() // hello
	lost := s.SendMessage("D1", "U1", "lost ack", "")
	env := first.next()
	origID := env["envelope_id"].(string)
	first.ws.Close()
	if err := s.WaitFor(func() bool { return !s.Connected() }, 2*time.Second); err != nil {
		t.Fatal(err)
	}
	queued := s.SendMessage("D1", "U1", "while down", "")

	second := dialSocketMode(t, s)
	second.next() // hello
	got := map[string]map[string]any{}
	for range 2 {
		e := second.next()
		ev := e["payload"].(map[string]any)["event"].(map[string]any)
		got[ev["ts"].(string)] = e
	}
	retry, ok := got[lost]
	if !ok || retry["retry_attempt"] != float64(1) || retry["envelope_id"] == origID {
		t.Errorf("retry of the unacked envelope = %v", retry)
	}
	if q, ok := got[queued]; !ok || q["retry_attempt"] != nil {
		t.Errorf("queued envelope = %v", q)
	}
}

func TestDisconnectEnvelope(t *testing.T) {
	s := New(t)
	sock := dialSocketMode(t, s)
	sock.next()
	if !s.Disconnect() {
		t.Fatal("Disconnect found no socket")
	}
	if m := sock.next(); m["type"] != "disconnect" {
		t.Errorf("got %v, want disconnect", m)
	}
	if s.Connected() {
		t.Error("still accepting envelopes on a socket told to disconnect")
	}
}

func TestWebAPIAuthAndErrors(t *testing.T) {
	s := New(t, WithoutEcho())
	ctx := t.Context()
	if _, err := client(s, "xoxb-wrong").AuthTestContext(ctx); err == nil || err.Error() != "invalid_auth" {
		t.Errorf("auth.test with a wrong token = %v, want invalid_auth", err)
	}
	api := client(s, BotToken)
	resp, err := api.AuthTestContext(ctx)
	if err != nil || resp.UserID != BotUserID || resp.BotID != BotID {
		t.Fatalf("auth.test = %+v, %v", resp, err)
	}

	s.Inject429("chat.postMessage", 1)
	_, _, err = api.PostMessageContext(ctx, "C1", slackapi.MsgOptionText("x", false))
	var rl *slackapi.RateLimitedError
	if !errors.As(err, &rl) || rl.RetryAfter != time.Second {
		t.Errorf("post after Inject429 = %v, want RateLimitedError{1s}", err)
	}
	if _, _, err := api.PostMessageContext(ctx, "C1", slackapi.MsgOptionText("x", false)); err != nil {
		t.Errorf("second post = %v", err)
	}

	s.FailMethod("chat.update", "cant_update_message", 1)
	if _, _, _, err := api.UpdateMessageContext(ctx, "C1", "1.1", slackapi.MsgOptionText("y", false)); err == nil || err.Error() != "cant_update_message" {
		t.Errorf("update = %v, want the injected error", err)
	}
	if _, _, _, err := api.UpdateMessageContext(ctx, "C1", "1.1", slackapi.MsgOptionText("y", false)); err == nil || err.Error() != "message_not_found" {
		t.Errorf("update of an unknown message = %v, want message_not_found", err)
	}

	long := slackapi.NewSectionBlock(slackapi.NewTextBlockObject("mrkdwn", strings.Repeat("x", 3001), false, false), nil, nil)
	if _, _, err := api.PostMessageContext(ctx, "C1", slackapi.MsgOptionBlocks(long)); err == nil || err.Error() != "invalid_blocks" {
		t.Errorf("post with a 3,001-char section = %v, want invalid_blocks", err)
	}
	if _, _, err := api.PostMessageContext(ctx, "C1", slackapi.MsgOptionText(strings.Repeat("x", 40001), false)); err == nil || err.Error() != "msg_too_long" {
		t.Errorf("post of 40,001 chars = %v, want msg_too_long", err)
	}
	if n := s.CallCount("chat.postMessage"); n != 4 {
		t.Errorf("%d chat.postMessage calls recorded, want 4 (429, ok, invalid_blocks, msg_too_long)", n)
	}
	for _, c := range s.Calls() {
		if c.Params.Get("token") != "" {
			t.Errorf("call %s recorded its token", c.Method)
		}
	}
}

func TestPostUpdateAndClickRoundTrip(t *testing.T) {
	s := New(t)
	api := client(s, BotToken)
	ctx := t.Context()
	blocks := []slackapi.Block{
		slackapi.NewSectionBlock(slackapi.NewTextBlockObject("mrkdwn", "approve?", false, false), nil, nil),
		slackapi.NewActionBlock("card:1", slackapi.NewButtonBlockElement("yes", "1|yes",
			slackapi.NewTextBlockObject("plain_text", "Yes", false, false)).WithStyle(slackapi.StylePrimary)),
	}
	_, ts, err := api.PostMessageContext(ctx, "C1", slackapi.MsgOptionText("approve?", false),
		slackapi.MsgOptionBlocks(blocks...), slackapi.MsgOptionTS("9.9"))
	if err != nil {
		t.Fatal(err)
	}
	m, _ := s.Current("C1", ts)
	if m.ThreadTS != "9.9" || len(m.Buttons) != 1 || m.Buttons[0] != (Button{BlockID: "card:1", ActionID: "yes", Value: "1|yes", Text: "Yes", Style: "primary"}) {
		t.Errorf("stored %+v", m)
	}
	// The echo of the bot's own post is an events_api envelope with bot_id.
	echo := s.EnvelopesFor(ts)
	if len(echo) != 1 || !strings.Contains(string(echo[0].Payload), `"bot_id":"`+BotID+`"`) {
		t.Errorf("echo envelopes %+v", echo)
	}

	id := s.Click("C1", ts, "U1", "yes", "")
	e, _ := s.Envelope(id)
	var cb slackapi.InteractionCallback
	if err := json.Unmarshal(e.Payload, &cb); err != nil {
		t.Fatal(err)
	}
	if len(cb.ActionCallback.BlockActions) != 1 {
		t.Fatalf("slack-go parsed %d block actions", len(cb.ActionCallback.BlockActions))
	}
	a := cb.ActionCallback.BlockActions[0]
	if a.ActionID != "yes" || a.BlockID != "card:1" || a.Value != "1|yes" || cb.Container.ThreadTs != "9.9" || cb.User.ID != "U1" {
		t.Errorf("click payload %+v / %+v", a, cb.Container)
	}

	if _, _, _, err := api.UpdateMessageContext(ctx, "C1", ts, slackapi.MsgOptionText("done", false), slackapi.MsgOptionBlocks()); err != nil {
		t.Fatal(err)
	}
	if m, _ := s.Current("C1", ts); m.Text != "done" || m.Blocks != nil || len(m.Buttons) != 0 {
		t.Errorf("after update %+v", m)
	}
}

func TestFileDownloadNeedsBotToken(t *testing.T) {
	s := New(t)
	f := s.AddFile("notes.txt", "text/plain", []byte("hello"))
	get := func(token string) (int, string) {
		req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, f.URLPrivateDownload, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := (&http.Client{Transport: &http.Transport{DisableKeepAlives: true}}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	if code, body := get(BotToken); code != 200 || body != "hello" {
		t.Errorf("with token: %d %q", code, body)
	}
	if code, _ := get(""); code != http.StatusForbidden {
		t.Errorf("without token: %d", code)
	}
	if code, _ := get(AppToken); code != http.StatusForbidden {
		t.Errorf("with the app token: %d", code)
	}
}

// MissingScope answers with Slack's scope diagnostics, which slack-go
// passes on in SlackErrorResponse.
func TestMissingScope(t *testing.T) {
	s := New(t, WithoutEcho())
	s.MissingScope("apps.connections.open", "connections:write", 1)
	_, _, err := client(s, BotToken).StartSocketModeContext(t.Context())
	var se slackapi.SlackErrorResponse
	if !errors.As(err, &se) || se.Err != "missing_scope" || se.Needed != "connections:write" {
		t.Fatalf("apps.connections.open = %#v, want missing_scope needing connections:write", err)
	}
	if _, _, err := client(s, BotToken).StartSocketModeContext(t.Context()); err != nil {
		t.Errorf("the second call = %v, want success (n was 1)", err)
	}
}

// SetOutage answers HTTP 503 to every call of the method until it ends;
// nothing is posted meanwhile and the calls are recorded.
func TestOutage(t *testing.T) {
	s := New(t, WithoutEcho())
	ctx := t.Context()
	api := client(s, BotToken)
	s.SetOutage(http.StatusServiceUnavailable, "chat.postMessage")
	for range 2 {
		var sce slackapi.StatusCodeError
		if _, _, err := api.PostMessageContext(ctx, "C1", slackapi.MsgOptionText("lost", false)); !errors.As(err, &sce) || sce.Code != 503 {
			t.Errorf("post during the outage = %v, want HTTP 503", err)
		}
	}
	s.SetOutage(0)
	if _, _, err := api.PostMessageContext(ctx, "C1", slackapi.MsgOptionText("x", false)); err != nil {
		t.Errorf("post after the outage = %v", err)
	}
	for _, p := range s.Posts() {
		if p.Text == "lost" {
			t.Error("a post refused with 503 was stored")
		}
	}

	if got := s.CallCount("chat.postMessage"); got != 3 {
		t.Errorf("%d chat.postMessage calls recorded, want 3", got)
	}
}

// RefuseConnections fails apps.connections.open with HTTP 503 and
// RefuseSockets fails the websocket handshake with 503, n times or until
// turned off; then connections work again.
func TestRefuseConnectionsAndSockets(t *testing.T) {
	s := New(t)
	c := client(s, BotToken)
	s.RefuseConnections(-1)
	for range 3 {
		_, _, err := c.StartSocketModeContext(t.Context())
		if sc, ok := errors.AsType[slackapi.StatusCodeError](err); !ok || sc.Code != http.StatusServiceUnavailable {
			t.Fatalf("apps.connections.open during an outage: %v, want HTTP 503", err)
		}
	}
	s.RefuseConnections(0)
	s.RefuseSockets(1)
	_, url, err := c.StartSocketModeContext(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	_, resp, err := websocket.DefaultDialer.Dial(url, nil)
	if err == nil || resp == nil || resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("refused handshake: %v, %v; want a 503", err, resp)
	}
	resp.Body.Close()
	if n := s.CallCount("websocket"); n != 1 {
		t.Errorf("%d refusals recorded, want 1", n)
	}
	if dialSocketMode(t, s).next()["type"] != "hello" {
		t.Error("no hello after the outage")
	}
}
