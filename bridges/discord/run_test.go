package discord

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/discord/discordfake"
)

// TestReconnectKeepsMessages: whatever ends the gateway connection in the
// middle of a conversation, the messages sent before, during and after
// reach the core exactly once.
func TestReconnectKeepsMessages(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		replay int // events the fake re-sends on RESUME (duplicates)
		fault  func(f *discordfake.Fake)
		// duringLost: a message sent while the session is invalid is
		// lost on Discord too (op 9 means "start over").
		resume bool
	}{
		{"op 7 reconnect", 0, (*discordfake.Fake).Reconnect, true},
		{"dropped socket", 0, (*discordfake.Fake).DropSocket, true},
		{"resume replays duplicates", 5, (*discordfake.Fake).DropSocket, true},
		{"close 4000", 0, func(f *discordfake.Fake) { f.CloseWith(discordfake.CloseUnknownError) }, true},
		{"op 9 invalid session", 0, (*discordfake.Fake).InvalidSession, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := discordfake.New(t)
			r := startReady(t, f)
			thread := r.rec.waitMsg(t, f.SendMessage("100", guild, "u1", "long task", true)).Key.Thread
			before := f.SendMessage(thread, guild, "u1", "before", false)
			r.rec.waitMsg(t, before)

			f.SetResumeReplay(tc.replay)
			tc.fault(f)
			ids := []string{before}
			if tc.resume {
				// Sent while the client is away: replayed on RESUME.
				ids = append(ids, f.SendMessage(thread, guild, "u1", "during", false))
				if err := f.WaitGateway(func(s discordfake.GatewayStats) bool { return s.Resumes == 1 && s.Live == 1 }, wait); err != nil {
					t.Fatalf("no resume: %v (%+v)", err, f.GatewayStats())
				}
			} else if err := f.WaitGateway(func(s discordfake.GatewayStats) bool { return s.Identifies == 2 && s.Live == 1 }, wait); err != nil {
				t.Fatalf("no new session: %v (%+v)", err, f.GatewayStats())
			}
			for i := range 3 {
				ids = append(ids, f.SendMessage(thread, guild, "u1", fmt.Sprintf("after %d", i), false))
			}
			for _, id := range ids {
				r.rec.waitMsg(t, id)
			}
			// A last message proves nothing else is still on its way.
			r.rec.waitMsg(t, f.SendMessage("dm-last", "", "u1", "last", false))
			for id, n := range countIDs(r.rec.messages()) {
				if n != 1 {
					t.Errorf("message %s delivered %d times", id, n)
				}
			}
			var order []string
			for _, m := range r.rec.messages() {
				order = append(order, m.Text)
			}
			t.Logf("delivered in order: %q; gateway %+v", order, f.GatewayStats())
		})
	}
}

func TestRateLimitedPostArrives(t *testing.T) {
	t.Parallel()
	f := discordfake.NewWithOptions(t, discordfake.Options{RetryAfter: 400 * time.Millisecond})
	b := newTestBridge(t, testBot(f))
	f.SendMessage("dm1", "", "u1", "hi", false) // creates the DM channel

	f.Inject429(discordfake.RouteCreateMessage, 1)
	start := time.Now()
	ref, err := b.Post(t.Context(), bridges.ConversationKey{Bot: botName, Channel: "dm1"}, bridges.Message{Text: "the answer"})
	took := time.Since(start)
	if err != nil {
		t.Fatalf("Post after 429: %v", err)
	}
	if took < 350*time.Millisecond {
		t.Errorf("Post took %v; the 429's retry_after (400ms) was not honoured", took)
	}
	if m, ok := f.Message(ref.ID); !ok || m.Content != "the answer" {
		t.Errorf("message = %+v, %v", m, ok)
	}
	if n := f.RequestCount(discordfake.RouteCreateMessage); n != 2 {
		t.Errorf("create-message requests = %d, want 2 (429 + retry)", n)
	}
	if n := len(f.Messages("dm1")); n != 2 {
		t.Errorf("dm has %d messages, want 2 (no duplicate post)", n)
	}
}

func TestFatalGatewayCloses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		opts     discordfake.Options
		token    string // overrides the configured token
		midRun   func(f *discordfake.Fake)
		want     error
		mentions []string
	}{
		{
			name: "4014 at connect", opts: discordfake.Options{DenyMessageContent: true},
			want: ErrDisallowedIntent, mentions: []string{"MESSAGE_CONTENT", "Privileged Gateway Intents", "4014"},
		},
		{
			name: "4014 while running",
			midRun: func(f *discordfake.Fake) {
				f.SetDenyMessageContent(true)
				f.CloseWith(discordfake.CloseDisallowedIntents)
			},
			want: ErrDisallowedIntent, mentions: []string{"MESSAGE_CONTENT", "Message Content Intent"},
		},
		{
			name: "4004 bad token", token: "not-the-token-s3cr3t",
			want: ErrAuthentication, mentions: []string{"4004", "token"},
		},
		{
			name:   "4013 while running",
			midRun: func(f *discordfake.Fake) { f.CloseWith(discordfake.CloseInvalidIntents) },
			want:   ErrGatewayFatal, mentions: []string{"4013"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := discordfake.NewWithOptions(t, tc.opts)
			bot := testBot(f)
			if tc.token != "" {
				bot.Discord.Token = tc.token
			}
			var r *running
			if tc.midRun != nil {
				r = startReady(t, f)
				tc.midRun(f)
			} else {
				r = start(t, newTestBridge(t, bot))
			}
			err := r.runErr(t)
			if !errors.Is(err, tc.want) {
				t.Fatalf("Run = %v, want %v", err, tc.want)
			}
			for _, s := range tc.mentions {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not mention %q", err, s)
				}
			}
			if tc.token != "" && strings.Contains(err.Error(), tc.token) {
				t.Errorf("error leaks the token: %v", err)
			}
			if !strings.Contains(err.Error(), botName) {
				t.Errorf("error %q does not name the bot", err)
			}
		})
	}
}

// guardTransport fails any request that would leave for discord.com.
type guardTransport struct {
	base http.RoundTripper
	mu   sync.Mutex
	seen []string
}

func (g *guardTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	g.mu.Lock()
	g.seen = append(g.seen, req.URL.Host+req.URL.Path)
	g.mu.Unlock()
	if strings.HasSuffix(req.URL.Hostname(), "discord.com") {
		return nil, fmt.Errorf("request escaped to %s", req.URL)
	}
	return g.base.RoundTrip(req)
}

func TestAPIURLRedirectsEverything(t *testing.T) {
	t.Parallel()
	f := discordfake.New(t)
	b := newTestBridge(t, testBot(f))
	rt, ok := b.session.Client.Transport.(*rewriteTransport)
	if !ok {
		t.Fatalf("REST transport is %T, want *rewriteTransport", b.session.Client.Transport)
	}
	guard := &guardTransport{base: rt.base}
	rt.base = guard
	r := start(t, b)
	if err := f.WaitGateway(func(s discordfake.GatewayStats) bool { return s.Live == 1 }, wait); err != nil {
		t.Fatal(err)
	}
	id := f.SendMessage("100", guild, "u1", "hello", true)
	key := r.rec.waitMsg(t, id).Key
	if _, err := r.Post(t.Context(), key, bridges.Message{Text: "hi"}); err != nil {
		t.Fatalf("Post: %v", err)
	}

	routes := map[string]bool{}
	for _, req := range f.Requests() {
		routes[req.Route] = true
	}
	for _, want := range []string{discordfake.RouteGateway, discordfake.RouteGetChannel, discordfake.RouteStartThread, discordfake.RouteCreateMessage} {
		if !routes[want] {
			t.Errorf("the fake never saw %s; requests: %+v", want, f.Requests())
		}
	}
	fake, err := url.Parse(f.URL())
	if err != nil {
		t.Fatal(err)
	}
	guard.mu.Lock()
	defer guard.mu.Unlock()
	if len(guard.seen) == 0 {
		t.Fatal("no REST request went through the transport")
	}
	for _, s := range guard.seen {
		if !strings.HasPrefix(s, fake.Host+"/api/v9/") {
			t.Errorf("request to %s, not to the fake", s)
		}
	}
}

func TestRewriteTransport(t *testing.T) {
	t.Parallel()
	var got []string
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		got = append(got, r.URL.String())
		return &http.Response{StatusCode: 204, Body: http.NoBody, Request: r}, nil
	})
	rt, err := newRewriteTransport("https://discord.com/api/v9/", "http://127.0.0.1:8080/proxy/discord", base)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ in, want string }{
		{"https://discord.com/api/v9/gateway", "http://127.0.0.1:8080/proxy/discord/gateway"},
		{"https://discord.com/api/v9/channels/1/messages?limit=5", "http://127.0.0.1:8080/proxy/discord/channels/1/messages?limit=5"},
		{"https://cdn.discordapp.com/attachments/1/2/a.png?ex=1", "https://cdn.discordapp.com/attachments/1/2/a.png?ex=1"},
		{"https://discord.com/api/v10/users/@me", "https://discord.com/api/v10/users/@me"},
	}
	for _, tc := range tests {
		req, _ := http.NewRequest(http.MethodGet, tc.in, nil)
		if _, err := rt.RoundTrip(req); err != nil {
			t.Fatal(err)
		}
		if g := got[len(got)-1]; g != tc.want {
			t.Errorf("%s → %s, want %s", tc.in, g, tc.want)
		}
		if req.URL.String() != tc.in {
			t.Errorf("the caller's request was modified: %s", req.URL)
		}
	}
	for _, bad := range []string{"discord.com/api", "ftp://x/", "http:///api/", "https://x/api?q=1"} {
		if _, err := newRewriteTransport("https://discord.com/api/v9/", bad, base); err == nil {
			t.Errorf("api_url %q accepted", bad)
		}
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestTypingIsRenewed(t *testing.T) {
	t.Parallel()
	f := discordfake.New(t)
	b := newTestBridge(t, testBot(f))
	b.typingEvery = 100 * time.Millisecond
	r := start(t, b)
	if err := f.WaitGateway(func(s discordfake.GatewayStats) bool { return s.Live == 1 }, wait); err != nil {
		t.Fatal(err)
	}
	f.SendMessage("dm1", "", "u1", "hi", false)
	key := bridges.ConversationKey{Bot: botName, Channel: "dm1"}

	if err := r.SetTyping(t.Context(), key, true); err != nil {
		t.Fatalf("SetTyping on: %v", err)
	}
	if n := len(f.Typing()); n < 1 {
		t.Fatalf("no typing indicator sent before SetTyping returned")
	}
	if err := f.Wait(wait, func() bool { return len(f.Typing()) >= 4 }); err != nil {
		t.Fatalf("typing not renewed: %d indicators", len(f.Typing()))
	}
	if err := r.SetTyping(t.Context(), key, false); err != nil {
		t.Fatalf("SetTyping off: %v", err)
	}
	time.Sleep(50 * time.Millisecond) // a renewal in flight may still land
	n := len(f.Typing())
	time.Sleep(400 * time.Millisecond)
	if m := len(f.Typing()); m != n {
		t.Errorf("typing went on after off: %d → %d", n, m)
	}
	for _, ty := range f.Typing() {
		if ty.ChannelID != "dm1" {
			t.Errorf("typing in %s", ty.ChannelID)
		}
	}
}
