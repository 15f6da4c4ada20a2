package bridges_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agentbridge/agentbridge/bridges"
)

// TestGuardWrites: a request goes out without a guard and while its guard
// allows it; once the guard says no, it is withheld (the server sees
// nothing) with ErrWriteGuarded, and its body is closed.
func TestGuardWrites(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer srv.Close()
	client := &http.Client{Transport: bridges.GuardWrites(http.DefaultTransport)}
	var held atomic.Bool
	held.Store(true)
	guarded := bridges.WithWriteGuard(context.Background(), held.Load)

	post := func(ctx context.Context) (*closeRecorder, error) {
		body := &closeRecorder{Reader: strings.NewReader("reply")}
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/chat.postMessage", body)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := client.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		return body, err
	}
	if _, err := post(context.Background()); err != nil {
		t.Fatalf("without a guard: %v", err)
	}
	if _, err := post(guarded); err != nil {
		t.Fatalf("guard allows: %v", err)
	}
	held.Store(false)
	body, err := post(guarded)
	if !errors.Is(err, bridges.ErrWriteGuarded) {
		t.Fatalf("guard refuses: err %v, want ErrWriteGuarded", err)
	}
	if !body.closed.Load() {
		t.Error("the withheld request's body was not closed")
	}
	if n := hits.Load(); n != 2 {
		t.Errorf("the server got %d requests, want 2 (the withheld one never sent)", n)
	}
	if !bridges.WriteAllowed(context.Background()) || bridges.WriteAllowed(guarded) {
		t.Error("WriteAllowed: want true without a guard, false while the guard says no")
	}
}

type closeRecorder struct {
	*strings.Reader
	closed atomic.Bool
}

func (c *closeRecorder) Close() error { c.closed.Store(true); return nil }
