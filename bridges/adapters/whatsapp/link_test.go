package whatsapp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mdp/qrterminal/v3"
	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"
)

// offlineClient is the real client with its network calls replaced:
// Connect does nothing, PairPhone answers what the test says. Events
// dispatched to the real client drive its real QR channel.
type offlineClient struct {
	*whatsmeow.Client
	pairCode string
	pairErr  error
	paired   chan string   // phones PairPhone was called with
	connects chan struct{} // a value per Connect call
}

// Connect only reports that it was called (after GetQRChannel).
func (o *offlineClient) Connect() error {
	o.connects <- struct{}{}
	return nil
}

func (o *offlineClient) PairPhone(_ context.Context, phone string, _ bool, _ whatsmeow.PairClientType, _ string) (string, error) {
	o.paired <- phone
	return o.pairCode, o.pairErr
}

// linkRun is a Link running in the background on an offline client.
type linkRun struct {
	out  *outBuf
	cli  *offlineClient
	done chan struct{}
	jid  types.JID
	err  error
}

// startLink runs Link for bot "phone" on a device store in a temp dir
// (opts.DeviceStore, Out and Bot are filled in when empty) and returns once
// the client is connecting (its QR channel is listening).
func startLink(t *testing.T, opts LinkOptions, o *offlineClient) *linkRun {
	t.Helper()
	if opts.DeviceStore == "" {
		opts.DeviceStore = filepath.Join(t.TempDir(), "whatsapp-phone.db")
	}
	if opts.Bot == "" {
		opts.Bot = "phone"
	}
	r := &linkRun{out: newOutBuf(), done: make(chan struct{})}
	opts.Out = r.out
	if o == nil {
		o = &offlineClient{}
	}
	o.paired = make(chan string, 4)
	o.connects = make(chan struct{}, 1)
	made := make(chan *offlineClient, 1)
	go func() {
		defer close(r.done)
		r.jid, r.err = linkWith(t.Context(), opts, func(cli *whatsmeow.Client) linkClient {
			o.Client = cli
			made <- o
			return o
		})
	}()
	select {
	case r.cli = <-made:
	case <-r.done:
		t.Fatalf("Link returned before making a client: %v", r.err)
	case <-time.After(waitTimeout):
		t.Fatal("Link made no client")
	}
	select {
	case <-o.connects:
	case <-r.done:
		t.Fatalf("Link returned before connecting: %v", r.err)
	case <-time.After(waitTimeout):
		t.Fatal("Link did not connect")
	}
	return r
}

func (r *linkRun) dispatch(evt any) { r.cli.DangerousInternals().DispatchEvent(evt) }

func (r *linkRun) wait(t *testing.T) (types.JID, error) {
	t.Helper()
	select {
	case <-r.done:
		return r.jid, r.err
	case <-time.After(waitTimeout):
		t.Fatalf("Link did not return; output:\n%s", r.out.String())
		return types.JID{}, nil
	}
}

func halfBlock(code string) string {
	var b bytes.Buffer
	qrterminal.GenerateHalfBlock(code, qrterminal.L, &b)
	return b.String()
}

// Linking with QR codes on the real client: the code is drawn (half-block)
// with how to scan it, and Link returns only once the paired device has
// connected, printing the linked number. (One QR event: a second one would
// start a second code emitter in whatsmeow, which races with the first;
// rotation is TestLinkQRRefresh.)
func TestLinkQR(t *testing.T) {
	r := startLink(t, LinkOptions{}, nil)
	r.dispatch(&events.QR{Codes: []string{"2@first-code", "2@second-code"}})
	r.out.waitCount(t, halfBlock("2@first-code"), 1)
	r.out.waitCount(t, "Settings → Linked devices → Link a device", 1)

	jid := types.NewJID("15551234567", types.DefaultUserServer)
	jid.Device = 12
	r.dispatch(&events.PairSuccess{ID: jid, Platform: "android"})
	r.out.waitCount(t, "waiting for the new device to connect", 1)
	select {
	case <-r.done:
		t.Fatalf("Link returned on the pair event, before the connection: %v", r.err)
	case <-time.After(50 * time.Millisecond):
	}
	r.dispatch(&events.Connected{})
	got, err := r.wait(t)
	if err != nil {
		t.Fatal(err)
	}
	if got != jid {
		t.Errorf("linked JID = %v, want %v", got, jid)
	}
	if out := r.out.String(); !strings.Contains(out, `Linked bot "phone" to +15551234567.`) {
		t.Errorf("output lacks the linked number:\n%s", out)
	}
}

// Each code WhatsApp rotates in is drawn again: below the previous one, or
// on a cleared screen when the output is a terminal.
func TestLinkQRRefresh(t *testing.T) {
	for _, clear := range []bool{false, true} {
		t.Run(fmt.Sprintf("clear=%v", clear), func(t *testing.T) {
			f := newFakeClient(nil)
			codes := []string{"2@one", "2@two", "2@three"}
			for i, c := range codes {
				lifetime := 20 * time.Second // whatsmeow: 60 s for the first code, 20 s for the next
				if i == 0 {
					lifetime = 60 * time.Second
				}
				f.qr <- whatsmeow.QRChannelItem{Event: whatsmeow.QRChannelEventCode, Code: c, Timeout: lifetime}
			}
			f.qr <- whatsmeow.QRChannelSuccess
			close(f.qr)
			out := newOutBuf()
			jid := types.NewJID("15551234567", types.DefaultUserServer)
			done := make(chan error, 1)
			go func() {
				_, err := link(t.Context(), f, LinkOptions{Bot: "phone", Out: out, ClearScreen: clear, Log: slog.New(slog.DiscardHandler)})
				done <- err
			}()
			out.waitCount(t, "waiting for the new device to connect", 1)
			f.Dispatch(&events.PairSuccess{ID: jid})
			f.Dispatch(&events.Connected{})
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			got := out.String()
			last := -1
			for _, c := range codes {
				i := strings.Index(got, halfBlock(c))
				if i <= last {
					t.Fatalf("code %s not drawn after the previous one:\n%s", c, got)
				}
				last = i
			}
			if n := strings.Count(got, "Link a device"); n != 3 {
				t.Errorf("%d instruction lines, want one per code", n)
			}
			if !strings.Contains(got, "valid for 60 s") || !strings.Contains(got, "valid for 20 s") {
				t.Errorf("code lifetimes not shown:\n%s", got)
			}
			if clears := strings.Count(got, "\x1b[2J"); clear && clears != 3 || !clear && clears != 0 {
				t.Errorf("%d screen clears with ClearScreen=%v", clears, clear)
			}
			if changed := strings.Count(got, "The code changed"); clear && changed != 0 || !clear && changed != 2 {
				t.Errorf("%d 'code changed' lines with ClearScreen=%v", changed, clear)
			}
		})
	}
}

// With -phone, the bridge asks for a pairing code (after the first QR
// item, when the connection is up) and prints it instead of QR codes.
func TestLinkPairingCode(t *testing.T) {
	r := startLink(t, LinkOptions{Phone: "+15551234567"}, &offlineClient{pairCode: "ABCD-EFGH"})
	r.dispatch(&events.QR{Codes: []string{"2@first-code", "2@second-code"}})
	r.out.waitCount(t, "ABCD-EFGH", 1)
	if phone := <-r.cli.paired; phone != "+15551234567" {
		t.Errorf("PairPhone(%q)", phone)
	}
	r.out.waitCount(t, "Link with phone number instead", 1)
	jid := types.NewJID("15551234567", types.DefaultUserServer)
	r.dispatch(&events.PairSuccess{ID: jid})
	r.dispatch(&events.Connected{})
	if _, err := r.wait(t); err != nil {
		t.Fatal(err)
	}
	if out := r.out.String(); strings.Contains(out, halfBlock("2@first-code")) {
		t.Errorf("a QR code was drawn in pairing-code mode:\n%s", out)
	}
}

// Rotated QR codes do not ask for another pairing code.
func TestLinkPairingCodeOnce(t *testing.T) {
	f := newFakeClient(nil)
	f.pairCode = "ABCD-EFGH"
	for _, c := range []string{"2@one", "2@two", "2@three"} {
		f.qr <- whatsmeow.QRChannelItem{Event: whatsmeow.QRChannelEventCode, Code: c, Timeout: 20 * time.Second}
	}
	f.qr <- whatsmeow.QRChannelSuccess
	f.Dispatch(&events.Connected{}) // no handler yet: link waits for the next one
	out := newOutBuf()
	done := make(chan error, 1)
	go func() {
		_, err := link(t.Context(), f, LinkOptions{Bot: "phone", Phone: "+15551234567", Out: out, Log: slog.New(slog.DiscardHandler)})
		done <- err
	}()
	out.waitCount(t, "waiting for the new device to connect", 1)
	f.Dispatch(&events.Connected{})
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	var pairs int
	for _, c := range f.Calls() {
		if c.Op == "PairPhone" {
			pairs++
		}
	}
	if pairs != 1 || strings.Count(out.String(), "ABCD-EFGH") != 1 {
		t.Errorf("%d pairing codes requested, output:\n%s", pairs, out.String())
	}
}

// Every way linking can fail ends Link with a clear error.
func TestLinkFailures(t *testing.T) {
	tests := []struct {
		name    string
		opts    LinkOptions
		client  *offlineClient
		events  []any
		wantErr error
		wantMsg string
	}{
		{"codes ran out", LinkOptions{}, nil, []any{&events.QR{Codes: []string{"c"}}, &events.Disconnected{}},
			ErrLinkTimeout, "codes expired"},
		{"nobody scans in time", LinkOptions{Timeout: 100 * time.Millisecond}, nil, []any{&events.QR{Codes: []string{"c"}}},
			ErrLinkTimeout, "in time"},
		{"paired but never connected", LinkOptions{Timeout: 300 * time.Millisecond}, nil,
			[]any{&events.QR{Codes: []string{"c"}}, &events.PairSuccess{ID: types.NewJID("1555", types.DefaultUserServer)}},
			ErrLinkTimeout, "did not connect"},
		{"passkey request", LinkOptions{}, nil, []any{&events.QR{Codes: []string{"c"}}, &events.PairPasskeyRequest{}},
			ErrLinkRefused, "passkey"},
		{"client outdated", LinkOptions{}, nil, []any{&events.ClientOutdated{}},
			ErrLinkRefused, "upgrade the bridge"},
		{"pairing fails locally", LinkOptions{}, nil, []any{&events.PairError{Error: errors.New("bad signature")}},
			ErrLinkRefused, "bad signature"},
		{"number not on WhatsApp", LinkOptions{Phone: "+15550000000"}, &offlineClient{pairErr: errors.New("server returned error 400")},
			[]any{&events.QR{Codes: []string{"c"}}}, ErrLinkRefused, "is this number on WhatsApp?"},
		{"number without country code", LinkOptions{Phone: "0612345678"}, &offlineClient{pairErr: whatsmeow.ErrPhoneNumberIsNotInternational},
			[]any{&events.QR{Codes: []string{"c"}}}, ErrLinkRefused, "full international number"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := startLink(t, tt.opts, tt.client)
			for i, e := range tt.events {
				if i > 0 { // let the QR code reach Link first (whatsmeow races otherwise)
					r.out.waitCount(t, "Link a device", 1)
				}
				r.dispatch(e)
			}
			_, err := r.wait(t)
			if !errors.Is(err, tt.wantErr) || !strings.Contains(err.Error(), tt.wantMsg) {
				t.Errorf("err = %v, want %v with %q", err, tt.wantErr, tt.wantMsg)
			}
		})
	}
}

// A linked bot is not linked again unless -relink; -relink deletes the old
// device and links a new one. CheckLinked tells linked from unlinked.
func TestLinkAlreadyLinkedAndRelink(t *testing.T) {
	path := filepath.Join(t.TempDir(), "whatsapp-phone.db")
	if _, err := CheckLinked(t.Context(), "phone", path, "conf/bridge.yaml", nil); !errors.Is(err, ErrNotLinked) ||
		!strings.Contains(err.Error(), "bridge whatsapp-link -config conf/bridge.yaml -bot phone") {
		t.Fatalf("CheckLinked on a new store: %v", err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("CheckLinked created the device store: %v", err)
	}
	c, err := OpenDeviceStore(t.Context(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	dev, err := c.GetFirstDevice(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	saveLinked(t, c, dev, "15551234567")
	c.Close()
	if jid, err := CheckLinked(t.Context(), "phone", path, "bridge.yaml", nil); err != nil || jid.User != "15551234567" {
		t.Fatalf("CheckLinked on a linked store: %v, %v", jid, err)
	}

	_, err = Link(t.Context(), LinkOptions{Bot: "phone", DeviceStore: path, Out: newOutBuf()})
	if !errors.Is(err, ErrAlreadyLinked) || !strings.Contains(err.Error(), "+15551234567") || !strings.Contains(err.Error(), "-relink") {
		t.Fatalf("Link of a linked bot: %v", err)
	}

	r := startLink(t, LinkOptions{DeviceStore: path, Relink: true}, nil)
	r.out.waitCount(t, "Deleted the device linked to +15551234567", 1)
	if r.cli.Store.ID != nil {
		t.Errorf("relinking uses the old device %v", r.cli.Store.ID)
	}
	r.dispatch(&events.QR{Codes: []string{"c"}})
	r.out.waitCount(t, halfBlock("c"), 1)
	r.dispatch(&events.PairSuccess{ID: types.NewJID("15557654321", types.DefaultUserServer)})
	r.dispatch(&events.Connected{})
	if jid, err := r.wait(t); err != nil || jid.User != "15557654321" {
		t.Fatalf("relink: %v, %v", jid, err)
	}
	if _, err := CheckLinked(t.Context(), "phone", path, "bridge.yaml", nil); !errors.Is(err, ErrNotLinked) {
		t.Errorf("the old device is still stored after -relink: %v", err)
	}
}
