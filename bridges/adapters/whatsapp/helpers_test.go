package whatsapp

import (
	"bytes"
	"fmt"
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

// waitTimeout bounds a wait for something that will happen (a failure
// bound, not an expected speed): a reply through a PostgreSQL-backed
// replica took longer than 10 s once, with the whole suite running beside it.
const waitTimeout = 30 * time.Second

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

// textOf is the text a sent message shows: its own, or for an edit the
// new text (editedID tells which message it replaces).
func textOf(c fakeCall) string {
	if c.Message == nil {
		return ""
	}
	if pm := c.Message.GetEditedMessage().GetMessage().GetProtocolMessage(); pm != nil {
		return pm.GetEditedMessage().GetExtendedTextMessage().GetText()
	}
	return c.Message.GetExtendedTextMessage().GetText() + c.Message.GetConversation()
}

// editedID is the id of the message an edit replaces ("" for no edit).
func editedID(c fakeCall) string {
	return c.Message.GetEditedMessage().GetMessage().GetProtocolMessage().GetKey().GetID()
}

func sends(cs []fakeCall) []fakeCall {
	var out []fakeCall
	for _, c := range cs {
		if c.Op == "SendMessage" {
			out = append(out, c)
		}
	}
	return out
}

func dumpCalls(cs []fakeCall) string {
	var b strings.Builder
	for _, c := range cs {
		fmt.Fprintf(&b, "  %s to=%s state=%s ids=%v text=%q\n", c.Op, c.To, c.State, c.IDs, textOf(c))
	}
	return b.String()
}

// agentTexts are the user messages the agents received, in order.
func (e *env) agentTexts() []string {
	var out []string
	for _, s := range e.core.Pool.Sessions() {
		for _, m := range s.Sent() {
			out = append(out, m.Text)
		}
	}
	return out
}

func decisions(e *env) []bool {
	var out []bool
	for _, s := range e.core.Pool.Sessions() {
		for _, d := range s.Decisions() {
			out = append(out, d.Decision.Allow)
		}
	}
	return out
}
