package whatsapp

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/bridges/features/replica/connlease"
	"github.com/agentbridge/agentbridge/bridges/kits/bridgetest"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/store"
	"github.com/agentbridge/agentbridge/store/pgtest"
	"go.mau.fi/whatsmeow/types"
)

// postgres starts a throwaway PostgreSQL for one test and returns a fresh
// database's DSN (the test is skipped without PostgreSQL, failed under CI).
func postgres(t *testing.T) string {
	t.Helper()
	return pgtest.StartFor(t).NewDatabase(t, "")
}

// With store.driver: postgres a bot's device store is its own schema of
// the bridge's database: linking stores the device there, Open finds it
// there (no file), and another bot's schema holds no device of it — also
// when the first bot's tables already exist (whatsmeow looks its version
// table up in every schema).
func TestDeviceStoreInPostgres(t *testing.T) {
	dsn := postgres(t)
	cfg := &config.Config{Path: "bridge.yaml", Store: config.Store{Driver: config.StorePostgres, DSN: dsn}}
	phone := &config.Bot{Name: "phone", Platform: Name, Settings: &Config{DeviceStore: t.TempDir() + "/unused.db"}}
	if _, _, err := Open(t.Context(), cfg, phone, nil); !errors.Is(err, ErrNotLinked) {
		t.Fatalf("Open of an unlinked bot: %v, want ErrNotLinked", err)
	}
	c, err := openPGDevices(t.Context(), PGDevicesOf(cfg, "phone"), nil)
	if err != nil {
		t.Fatal(err)
	}
	saveLinked(t, c, c.NewDevice(), "15550000001")
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	b, closeStore, err := Open(t.Context(), cfg, phone, nil)
	if err != nil {
		t.Fatalf("Open of the linked bot: %v", err)
	}
	if pn, _ := b.self(); pn.User != "15550000001" {
		t.Errorf("own number %v", pn)
	}
	if err := closeStore(); err != nil {
		t.Error(err)
	}

	other := &config.Bot{Name: "Team Phone", Platform: Name, Settings: &Config{DeviceStore: t.TempDir() + "/unused.db"}}
	if _, _, err := Open(t.Context(), cfg, other, nil); !errors.Is(err, ErrNotLinked) {
		t.Errorf("Open of another, unlinked bot: %v, want ErrNotLinked (its own schema %s)", err, DeviceSchema(other.Name))
	}
	if a, b := DeviceSchema("phone"), DeviceSchema("Team Phone"); a != "whatsapp_phone" || b == a || len(b) > 63 {
		t.Errorf("schemas %q and %q", a, b)
	}
}

// waReplica is one replica serving the bot: its client of the device (a
// fake), the adapter behind a connection gate and a real core.
type waReplica struct {
	*bridgetest.Replica
	e *env
}

const waLease = 2 * time.Second

func startWAReplica(t *testing.T, name string, st *store.Store) *waReplica {
	t.Helper()
	fake := newFakeClient(nil)
	self := func() (types.JID, types.JID) {
		pn := pnJID("+" + botPhone)
		pn.Device = 7
		return pn, types.EmptyJID
	}
	b := New(Options{Bot: "phone", Client: fake, Self: self, SendInterval: sendInterval})
	cfg := bridgetest.Config(t, &config.Bot{Name: "phone", Platform: Name, Agent: "coder", Settings: &Config{},
		Access: config.Access{Users: []string{alice}}})
	r := bridgetest.RunReplica(t, bridgetest.ReplicaOptions{Owner: name, Config: cfg, Store: st, Bot: "phone", Platform: b,
		Resource: connlease.Resource(Name, "phone"), TTL: waLease, Script: script})
	return &waReplica{Replica: r, e: &env{t: t, fake: fake, b: b}}
}

// lastOp is when the fake last received call op (zero: never).
func lastOp(f *fakeClient, op string) time.Time {
	var at time.Time
	for _, c := range f.Calls() {
		if c.Op == op {
			at = c.At
		}
	}
	return at
}

// TestDeviceHandOver: two replicas serve one WhatsApp bot on one
// PostgreSQL database. One connects the linked device; the other never
// does while it holds it. When the holder dies (its lease neither renewed
// nor released) the standby connects within the lease time plus a poll,
// after the holder's client disconnected, and answers the next message.
func TestDeviceHandOver(t *testing.T) {
	dsn := postgres(t)
	a := startWAReplica(t, "replica-a", bridgetest.OpenPostgresStore(t, dsn))
	a.e.waitCalls("a connects", func(cs []fakeCall) bool { return slices.ContainsFunc(cs, op("Connect")) })
	b := startWAReplica(t, "replica-b", bridgetest.OpenPostgresStore(t, dsn))
	a.e.dispatch(a.e.msg(pnJID(alice), pnJID(alice), "hello"))
	a.e.waitText(pnJID(alice), "pong: *hello*")
	time.Sleep(waLease) // b keeps standing by
	if slices.ContainsFunc(b.e.fake.Calls(), op("Connect")) {
		t.Fatal("the standby connected the device while the holder holds it")
	}

	a.Leases.Cut.Store(true)
	died := time.Now()
	a.Stop()
	b.e.waitCallsWithin(3*waLease, "b connects", func(cs []fakeCall) bool { return slices.ContainsFunc(cs, op("Connect")) })
	connected := lastOp(b.e.fake, "Connect")
	if took, limit := connected.Sub(died), waLease+waLease/5+time.Second; took > limit {
		t.Errorf("the standby connected %v after the holder died, want within %v", took, limit)
	}
	if gone := lastOp(a.e.fake, "Disconnect"); gone.IsZero() || gone.After(connected) {
		t.Errorf("the holder disconnected at %v, after the standby connected at %v", gone, connected)
	}
	t.Logf("device taken over %v after the holder died (lease %v)", connected.Sub(died), waLease)
	b.e.n = a.e.n // message ids go on: the ledger in the shared database drops a repeated id
	b.e.dispatch(b.e.msg(pnJID(alice), pnJID(alice), "still there?"))
	b.e.waitText(pnJID(alice), "pong: *still there?*")
}
