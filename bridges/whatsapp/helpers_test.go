package whatsapp

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"

	"go.mau.fi/whatsmeow/proto/waAdv"
	"go.mau.fi/whatsmeow/store"
	"go.mau.fi/whatsmeow/store/sqlstore"
	"go.mau.fi/whatsmeow/types"
)

// saveLinked stores dev in c as if pairing had linked it to +user.
func saveLinked(tb testing.TB, c *sqlstore.Container, dev *store.Device, user string) {
	tb.Helper()
	jid := types.NewJID(user, types.DefaultUserServer)
	jid.Device = 7
	dev.ID = &jid
	dev.Account = &waAdv.ADVSignedDeviceIdentity{Details: []byte{1}, AccountSignature: make([]byte, 64), AccountSignatureKey: make([]byte, 32), DeviceSignature: make([]byte, 64)}
	if err := c.PutDevice(tb.Context(), dev); err != nil {
		tb.Fatal(err)
	}
}

const waitTimeout = 10 * time.Second

// outBuf is a concurrency-safe io.Writer whose content tests wait on.
type outBuf struct {
	mu      sync.Mutex
	b       bytes.Buffer
	changed chan struct{}
}

func newOutBuf() *outBuf { return &outBuf{changed: make(chan struct{})} }

func (o *outBuf) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	close(o.changed)
	o.changed = make(chan struct{})
	return o.b.Write(p)
}

func (o *outBuf) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.b.String()
}

// waitCount waits until sub occurs at least n times in the output.
func (o *outBuf) waitCount(tb testing.TB, sub string, n int) {
	tb.Helper()
	deadline := time.NewTimer(waitTimeout)
	defer deadline.Stop()
	for {
		o.mu.Lock()
		got, ch := strings.Count(o.b.String(), sub), o.changed
		o.mu.Unlock()
		if got >= n {
			return
		}
		select {
		case <-ch:
		case <-deadline.C:
			tb.Fatalf("output has %d× %q, want %d; output:\n%s", got, sub, n, o.String())
		}
	}
}
