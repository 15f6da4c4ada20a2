package discord

import (
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/adapters/discord/discordfake"
	"github.com/bwmarrin/discordgo"
)

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
	r := runRecorded(t, b)
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

func TestInvite(t *testing.T) {
	t.Parallel()
	if InvitePermissions != 309237746688 || InvitePermissions&discordgo.PermissionAttachFiles == 0 {
		t.Errorf("InvitePermissions = %d", InvitePermissions)
	}
	// The fake Discord grants the bot exactly the invite's permissions, so
	// a feature needing one the invite lacks fails its test.
	if discordfake.DefaultPermissions != InvitePermissions {
		t.Errorf("discordfake.DefaultPermissions = %d, want InvitePermissions %d", discordfake.DefaultPermissions, InvitePermissions)
	}
	want := "https://discord.com/oauth2/authorize?client_id=42&permissions=309237746688&scope=bot"
	if got := InviteURL("42"); got != want {
		t.Errorf("InviteURL = %s, want %s", got, want)
	}
}

// TestDocsMatchCode keeps docs/discord.md in step with the intents and
// permissions the code asks for.
func TestDocsMatchCode(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "discord.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{
		strconv.FormatInt(InvitePermissions, 10),
		"Message Content Intent",
		"MESSAGE_CONTENT",
		"api_url",
		"4014",
	} {
		if !strings.Contains(string(doc), s) {
			t.Errorf("docs/discord.md does not mention %q", s)
		}
	}
}
