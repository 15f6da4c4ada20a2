package app

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/adapters/web/admin"
	"github.com/agentbridge/agentbridge/bridges/app/healthz"
	"github.com/agentbridge/agentbridge/bridges/kits/bridgetest"
	"github.com/agentbridge/agentbridge/config"
)

// TestReplicaConfigsDiffer: two bridge processes on one database record
// the config file they run; while their files are the same /healthz says
// nothing, once one reloads a different file the other's /healthz names
// it; a process that stopped (its row gone) or died (its row stale) is no
// longer compared.
func TestReplicaConfigsDiffer(t *testing.T) {
	ctx := context.Background()
	st := bridgetest.OpenStore(t)
	now := time.Now()
	clock := func() time.Time { return now }
	gen := config.Generation{Number: 1, At: now}
	mk := func(id string) *replicaConfigs {
		rc := &replicaConfigs{id: id, st: st, log: slog.New(slog.DiscardHandler), now: clock}
		rc.set("hash-one-0123456789", gen)
		return rc
	}
	a, b := mk("host-a-1"), mk("host-b-2")
	a.beat(ctx)
	b.beat(ctx)
	a.beat(ctx)
	health := func() healthz.Config {
		t.Helper()
		h := healthz.Handler(func() []bridges.BotStatus { return nil }, healthz.Sources{
			Config:   func() admin.ConfigStatus { return admin.ConfigStatus{Generation: 1, At: now} },
			Replicas: replicasStatus(a)})
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", "/healthz", nil))
		var body healthz.Body
		if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil {
			t.Fatal(err)
		}
		if body.Config == nil || body.Config.Replicas == nil {
			t.Fatalf("/healthz has no replicas section: %s", w.Body)
		}
		return *body.Config
	}
	if c := health(); c.Replicas.Replica != "host-a-1" || c.Replicas.FileHash != "hash-one-012" || len(c.Replicas.Differs) != 0 || c.Replicas.Note != "" {
		t.Fatalf("same files: %+v", c.Replicas)
	}

	b.set("hash-two-0123456789", config.Generation{Number: 2, At: now})
	b.beat(ctx)
	a.beat(ctx)
	c := health()
	if len(c.Replicas.Differs) != 1 || c.Replicas.Differs[0].Replica != "host-b-2" || c.Replicas.Differs[0].Generation != 2 ||
		!strings.Contains(c.Replicas.Note, "differs") {
		t.Fatalf("b reloaded another file: %+v", c.Replicas)
	}
	if len(b.status().Differs) != 1 {
		t.Errorf("b does not see that a differs: %+v", b.status())
	}

	now = now.Add(replicaLive + time.Second) // b died: its row is stale
	a.beat(ctx)
	if c := health(); len(c.Replicas.Differs) != 0 {
		t.Fatalf("a dead replica is still compared: %+v", c.Replicas)
	}
	b.beat(ctx) // b is back, then stops
	a.beat(ctx)
	if len(a.status().Differs) != 1 {
		t.Fatal("b's heartbeat is not seen")
	}
	bctx, cancel := context.WithCancel(ctx)
	cancel()
	b.run(bctx, time.Hour) // beats once, then removes its row as ctx has ended
	a.beat(ctx)
	if d := a.status().Differs; len(d) != 0 {
		t.Fatalf("a stopped replica is still compared: %+v", d)
	}
}
