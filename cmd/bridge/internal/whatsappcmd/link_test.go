package whatsappcmd

import (
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/bridges/adapters/whatsapp"
	"github.com/agentbridge/agentbridge/bridges/app"
	"github.com/agentbridge/agentbridge/bridges/features/replica/connlease"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/store"
	"github.com/agentbridge/agentbridge/store/pgtest"
)

// whatsapp-link into PostgreSQL keeps every bridge off the device: it is
// refused while a replica holds the device's connection lease, and while
// it links no replica can take the device.
func TestLinkHoldsTheDevice(t *testing.T) {
	ctx := t.Context()
	cfg := &config.Config{Store: config.Store{Driver: config.StorePostgres, DSN: pgtest.StartFor(t).NewDatabase(t, "")}}
	logger := slog.New(slog.DiscardHandler)
	st, err := app.OpenStore(ctx, cfg, logger)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	resource := connlease.Resource(whatsapp.Name, "phone")

	l, err := st.AcquireLease(ctx, resource, "replica-1", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := holdDeviceForLink(ctx, cfg, "phone", time.Minute, logger); !errors.Is(err, store.ErrLeaseHeld) ||
		!strings.Contains(err.Error(), "stop every replica first") {
		t.Fatalf("link while a replica holds the device: %v", err)
	}
	if err := st.ReleaseLease(ctx, l); err != nil {
		t.Fatal(err)
	}

	release, err := holdDeviceForLink(ctx, cfg, "phone", time.Minute, logger)
	if err != nil {
		t.Fatalf("link with no replica connected: %v", err)
	}
	if _, err := st.AcquireLease(ctx, resource, "replica-1", time.Minute); !errors.Is(err, store.ErrLeaseHeld) {
		t.Errorf("a replica took the device while it was being linked: %v", err)
	}
	release()
	if _, err := st.AcquireLease(ctx, resource, "replica-1", time.Minute); err != nil {
		t.Errorf("the device stays held after linking: %v", err)
	}
}
