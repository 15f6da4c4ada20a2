package handoff

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core/access"
	"github.com/agentbridge/agentbridge/bridges/core/access/accesstest"
	"github.com/agentbridge/agentbridge/bridges/kits/bridgetest"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/internal/testkit"
	"github.com/agentbridge/agentbridge/store"
)

// accessEnv is a hand-off server over the access property's fixture,
// with the config in force as a reload replaces it.
type accessEnv struct {
	live *config.Live
	st   *store.Store
	ids  map[accesstest.State]string
	hub  *Hub
	url  string
}

func newAccessEnv(t *testing.T) *accessEnv {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	cfg := accesstest.Config(false)
	cfg.DataDir = dir
	st, err := store.Open(ctx, filepath.Join(dir, "bridge.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ids, err := accesstest.Conversations(ctx, st, "coder")
	if err != nil {
		t.Fatal(err)
	}
	live := config.NewLive(cfg, time.Now())
	fc := &fakeCore{cfg: cfg, plat: bridgetest.New(bridges.Limits{MaxMessageRunes: 4000})}
	hub := NewHub()
	srv := NewServer(Options{Config: live, Store: st, Core: fc, Hub: hub, Heartbeat: time.Hour})
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(func() { srv.Shutdown(); hs.Close() })
	return &accessEnv{live: live, st: st, ids: ids, hub: hub, url: hs.URL}
}

// request sends a hand-off request with kind k's token.
func (e *accessEnv) request(ctx context.Context, t *testing.T, k accesstest.Kind, method, path, body string) *http.Response {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, method, e.url+Prefix+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+accesstest.Token(k))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// attachStream is an open attach stream: its events as they come, and a
// channel closed when the stream ends.
type attachStream struct {
	id     string
	events chan Event
	closed chan struct{}
}

func (e *accessEnv) attach(t *testing.T, k accesstest.Kind, s accesstest.State) (*attachStream, int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	resp := e.request(ctx, t, k, "GET", "attach?conversation="+e.ids[s], "")
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		cancel()
		return nil, resp.StatusCode
	}
	a := &attachStream{events: make(chan Event, 256), closed: make(chan struct{})}
	go func() {
		defer close(a.closed)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				var ev Event
				if json.Unmarshal([]byte(data), &ev) == nil {
					a.events <- ev
				}
			}
		}
	}()
	t.Cleanup(func() { cancel(); <-a.closed })
	select {
	case ev := <-a.events:
		a.id = ev.Attach
	case <-time.After(30 * time.Second):
		t.Fatal("no attached event")
	}
	return a, http.StatusOK
}

// TestAccessPropertyHandoff: export and attach, for the hand-off kinds and
// every conversation state, are let through exactly as the written table
// says; send and decide need an attachment of one's own and the decision
// again at that moment.
func TestAccessPropertyHandoff(t *testing.T) {
	e := newAccessEnv(t)
	ctx := context.Background()
	for _, k := range []accesstest.Kind{accesstest.HandoffWith, accesstest.HandoffNone} {
		for _, s := range accesstest.States {
			resp := e.request(ctx, t, k, "GET", "export?conversation="+e.ids[s], "")
			resp.Body.Close()
			// Let through, an export of this fixture (no session yet) is 409.
			if got, want := resp.StatusCode == http.StatusConflict, accesstest.May(k, s, access.Export); got != want {
				t.Errorf("export by the %s, %s conversation: %d, let through %v, want %v", k, s, resp.StatusCode, got, want)
			}
			a, status := e.attach(t, k, s)
			if got, want := a != nil, accesstest.May(k, s, access.Attach); got != want {
				t.Errorf("attach by the %s, %s conversation: %d, let through %v, want %v", k, s, status, got, want)
			}
			if a == nil {
				continue
			}
			for _, p := range []struct {
				path, body string
				act        access.Action
			}{{"send", `{"attach":"` + a.id + `","text":"hi"}`, access.Write}, {"decide", `{"attach":"` + a.id + `","card":"c1","choice":"allow"}`, access.Decide}} {
				resp := e.request(ctx, t, k, "POST", p.path, p.body)
				resp.Body.Close()
				if got, want := resp.StatusCode == http.StatusAccepted, accesstest.May(k, s, p.act); got != want {
					t.Errorf("%s by the %s, %s conversation: %d, let through %v, want %v", p.path, k, s, resp.StatusCode, got, want)
				}
			}
		}
	}
}

// TestRevocationEndsAttach: a share ended or downgraded to viewer, the
// conversation archived or deleted, a reload removing the person from
// handoff.users or changing their token: the open attach stream gets a
// final "ended" event within a second — here without any signal, by the
// periodic re-check alone, as when the change is made by another replica
// — nothing more is delivered, and send is refused.
func TestRevocationEndsAttach(t *testing.T) {
	ctx := context.Background()
	shared := accesstest.Thread(accesstest.Shared)
	bob := accesstest.HandoffWith
	for _, rv := range []struct {
		name   string
		revoke func(t *testing.T, e *accessEnv)
	}{
		{"share ended", func(t *testing.T, e *accessEnv) {
			testkit.Must(t, e.st.ShareWebThread(ctx, accesstest.Bot, shared, "bob", ""))
		}},
		{"downgraded to viewer", func(t *testing.T, e *accessEnv) {
			testkit.Must(t, e.st.ShareWebThread(ctx, accesstest.Bot, shared, "bob", store.WebViewer))
		}},
		{"archived", func(t *testing.T, e *accessEnv) {
			testkit.Must(t, e.st.ArchiveWebThread(ctx, accesstest.Bot, shared, true))
		}},
		{"deleted", func(t *testing.T, e *accessEnv) { testkit.Must(t, e.st.DeleteWebThread(ctx, accesstest.Bot, shared)) }},
		{"removed from handoff.users", func(t *testing.T, e *accessEnv) {
			cfg := *e.live.Current()
			cfg.Handoff.Users = cfg.Handoff.Users[1:] // bob-term is first
			e.live.Set(&cfg, time.Now(), "test")
		}},
		{"token changed", func(t *testing.T, e *accessEnv) {
			cfg := *e.live.Current()
			cfg.Handoff.Users = append([]config.HandoffUser(nil), cfg.Handoff.Users...)
			cfg.Handoff.Users[0].Token = "bob-term-new-token-0123456789"
			e.live.Set(&cfg, time.Now(), "test")
		}},
	} {
		t.Run(rv.name, func(t *testing.T) {
			e := newAccessEnv(t)
			a, status := e.attach(t, bob, accesstest.Shared)
			if a == nil {
				t.Fatalf("attach: %d", status)
			}
			key := bridges.ConversationKey{Bot: accesstest.Bot, Channel: "ana", Thread: shared}
			start := time.Now()
			rv.revoke(t, e)
			// At once, before the stream noticed: send is decided again now.
			resp := e.request(ctx, t, bob, "POST", "send", `{"attach":"`+a.id+`","text":"right after"}`)
			resp.Body.Close()
			if resp.StatusCode == http.StatusAccepted {
				t.Error("send accepted right after the revocation")
			}
			ended := false
			for !ended {
				select {
				case ev := <-a.events:
					if ev.Type == EventEnded {
						ended = true
						if took := time.Since(start); took > time.Second {
							t.Errorf("the attach stream ended %v after the revocation, want within 1s", took)
						}
					}
				case <-time.After(30 * time.Second):
					t.Fatal("no ended event")
				}
			}
			e.hub.Sent(key, "m-after", "ana", "ana's next message") // nothing more reaches the terminal
			select {
			case <-a.closed:
			case <-time.After(30 * time.Second):
				t.Fatal("the attach stream stayed open")
			}
			for len(a.events) > 0 {
				if ev := <-a.events; ev.Type != EventEnded {
					t.Errorf("delivered after the end: %+v", ev)
				}
			}
			resp = e.request(ctx, t, bob, "POST", "send", `{"attach":"`+a.id+`","text":"still here?"}`)
			resp.Body.Close()
			if resp.StatusCode == http.StatusAccepted {
				t.Error("send accepted after the revocation")
			}
		})
	}
}
