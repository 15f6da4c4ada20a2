package whatsapp

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"
)

// fakeCall is one call the fake client received.
type fakeCall struct {
	Op      string // method name
	At      time.Time
	To      types.JID
	Message *waE2E.Message                // SendMessage
	ID      types.MessageID               // SendMessage: the message id (the caller's, else generated)
	Err     error                         // SendMessage: what it returned (the message was not sent unless lost)
	Lost    bool                          // SendMessage: sent, but the answer was lost (LoseSends)
	IDs     []types.MessageID             // MarkRead
	State   string                        // SendChatPresence / SendPresence state
	Phones  []string                      // IsOnWhatsApp, PairPhone
	Media   whatsmeow.DownloadableMessage // Download
}

// fakeClient is a recording waClient: it sends nothing, remembers every
// call, builds messages with the real builders and delivers events given
// to Dispatch to the registered handlers, like the real client.
type fakeClient struct {
	builder *whatsmeow.Client // the real builders (they need no connection)
	// decrypter, when set, is a real client of the bot's device: it
	// decrypts poll votes, and the fake stores the secrets of the polls
	// it "sends" in its store, as the real SendMessage does.
	decrypter *whatsmeow.Client

	mu          sync.Mutex
	calls       []fakeCall
	handlers    map[uint32]whatsmeow.EventHandlerWithSuccessStatus
	order       []uint32
	nextID      uint32
	nextMsg     int
	connected   bool
	loggedIn    bool
	files       map[string][]byte // Download results by direct path
	onWA        map[string]types.IsOnWhatsAppResponse
	sendErr     error
	loseSends   int     // sends still to deliver while returning ErrMessageTimedOut
	connectErrs []error // errors of the next Connect calls, in order
	pairCode    string
	pairErr     error
	qr          chan whatsmeow.QRChannelItem // what GetQRChannel returns; tests feed it
	// presenceHook, when set, runs in every SendChatPresence call (after
	// it is recorded), outside the fake's lock: a test may block it.
	presenceHook func(state types.ChatPresence)
}

var _ waClient = (*fakeClient)(nil)

func newFakeClient(builder *whatsmeow.Client) *fakeClient {
	return &fakeClient{builder: builder, handlers: map[uint32]whatsmeow.EventHandlerWithSuccessStatus{},
		files: map[string][]byte{}, onWA: map[string]types.IsOnWhatsAppResponse{}, loggedIn: true,
		qr: make(chan whatsmeow.QRChannelItem, 8)}
}

func (f *fakeClient) record(c fakeCall) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c.At = time.Now()
	f.calls = append(f.calls, c)
}

// Calls returns the calls so far, oldest first.
func (f *fakeClient) Calls() []fakeCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]fakeCall(nil), f.calls...)
}

// Dispatch delivers evt to the handlers in registration order, stopping
// at the first that reports failure (as whatsmeow does); it reports
// whether all succeeded.
func (f *fakeClient) Dispatch(evt any) bool {
	if m, ok := evt.(*events.Message); ok && m.RawMessage == nil && m.Message != nil {
		// As the real client: the decrypted message is unwrapped
		// (ephemeral, view-once, document with caption, edits).
		m.RawMessage = m.Message
		m.UnwrapRaw()
	}
	f.mu.Lock()
	var hs []whatsmeow.EventHandlerWithSuccessStatus
	for _, id := range f.order {
		if h, ok := f.handlers[id]; ok {
			hs = append(hs, h)
		}
	}
	f.mu.Unlock()
	for _, h := range hs {
		if !h(evt) {
			return false
		}
	}
	return true
}

// SendMessage records the send. Like the real client it uses the
// caller's message id (SendRequestExtra.ID) when given, else makes one,
// and refuses while disconnected with an error wrapping
// whatsmeow.ErrNotConnected (the real client's: its device look-up
// fails first). LoseSends makes a send reach the chat while returning
// whatsmeow.ErrMessageTimedOut, as when the server's answer never comes.
func (f *fakeClient) SendMessage(ctx context.Context, to types.JID, m *waE2E.Message, extra ...whatsmeow.SendRequestExtra) (whatsmeow.SendResponse, error) {
	f.mu.Lock()
	err := f.sendErr
	if err == nil && !f.connected {
		err = fmt.Errorf("failed to get user info for %s to fill LID cache: failed to send usync query: %w", to, whatsmeow.ErrNotConnected)
	}
	lost := err == nil && f.loseSends > 0
	if lost {
		f.loseSends--
	}
	f.nextMsg++
	id := types.MessageID(fmt.Sprintf("SENT%03d", f.nextMsg))
	if len(extra) > 0 && extra[0].ID != "" {
		id = extra[0].ID
	}
	f.mu.Unlock()
	c := fakeCall{Op: "SendMessage", To: to, Message: m, ID: id, Err: err, Lost: lost}
	if lost {
		c.Err = whatsmeow.ErrMessageTimedOut
	}
	f.record(c)
	if err != nil {
		return whatsmeow.SendResponse{}, err
	}
	if secret := m.GetMessageContextInfo().GetMessageSecret(); secret != nil && f.decrypter != nil {
		own := f.decrypter.Store.GetJID()
		if err := f.decrypter.Store.MsgSecrets.PutMessageSecret(ctx, to, own, id, secret); err != nil {
			return whatsmeow.SendResponse{}, fmt.Errorf("fake: store message secret: %w", err)
		}
	}
	if lost {
		return whatsmeow.SendResponse{}, whatsmeow.ErrMessageTimedOut
	}
	return whatsmeow.SendResponse{ID: id, Timestamp: time.Now()}, nil
}

// LoseSends makes the next n sends reach the chat while their answer is
// lost (SendMessage returns whatsmeow.ErrMessageTimedOut).
func (f *fakeClient) LoseSends(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.loseSends = n
}

// Shown is what chat shows: the texts of the messages that reached it,
// one per message id (WhatsApp de-duplicates by id), in order, edits
// applied to the message they replace.
func (f *fakeClient) Shown(chat types.JID) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	at := map[types.MessageID]int{}
	for _, c := range f.calls {
		if c.Op != "SendMessage" || c.To != chat || (c.Err != nil && !c.Lost) {
			continue
		}
		if id := editedID(c); id != "" {
			if i, ok := at[types.MessageID(id)]; ok {
				out[i] = textOf(c)
			}
			continue
		}
		if _, dup := at[c.ID]; dup {
			continue
		}
		at[c.ID] = len(out)
		out = append(out, textOf(c))
	}
	return out
}

func (f *fakeClient) BuildPollCreation(name string, options []string, selectable int) *waE2E.Message {
	return f.builder.BuildPollCreation(name, options, selectable)
}

func (f *fakeClient) DecryptPollVote(ctx context.Context, vote *events.Message) (*waE2E.PollVoteMessage, error) {
	f.record(fakeCall{Op: "DecryptPollVote"})
	if f.decrypter == nil {
		return nil, errors.New("fake: no decrypter")
	}
	return f.decrypter.DecryptPollVote(ctx, vote)
}

func (f *fakeClient) BuildReaction(chat, sender types.JID, id types.MessageID, reaction string) *waE2E.Message {
	return f.builder.BuildReaction(chat, sender, id, reaction)
}

func (f *fakeClient) BuildEdit(chat types.JID, id types.MessageID, m *waE2E.Message) *waE2E.Message {
	return f.builder.BuildEdit(chat, id, m)
}

func (f *fakeClient) SendChatPresence(_ context.Context, jid types.JID, state types.ChatPresence, _ types.ChatPresenceMedia) error {
	f.record(fakeCall{Op: "SendChatPresence", To: jid, State: string(state)})
	f.mu.Lock()
	hook := f.presenceHook
	f.mu.Unlock()
	if hook != nil {
		hook(state)
	}
	return nil
}

func (f *fakeClient) SendPresence(_ context.Context, state types.Presence) error {
	f.record(fakeCall{Op: "SendPresence", State: string(state)})
	return nil
}

func (f *fakeClient) MarkRead(_ context.Context, ids []types.MessageID, _ time.Time, chat, _ types.JID, _ ...types.ReceiptType) error {
	f.record(fakeCall{Op: "MarkRead", To: chat, IDs: ids})
	return nil
}

func (f *fakeClient) Download(_ context.Context, msg whatsmeow.DownloadableMessage) ([]byte, error) {
	f.record(fakeCall{Op: "Download", Media: msg})
	f.mu.Lock()
	defer f.mu.Unlock()
	data, ok := f.files[msg.GetDirectPath()]
	if !ok {
		return nil, fmt.Errorf("fake: no media at %q", msg.GetDirectPath())
	}
	return data, nil
}

// Upload records the upload and answers like the media server would.
func (f *fakeClient) Upload(_ context.Context, data []byte, kind whatsmeow.MediaType) (whatsmeow.UploadResponse, error) {
	f.record(fakeCall{Op: "Upload", State: string(kind)})
	sum := sha256.Sum256(data)
	return whatsmeow.UploadResponse{URL: "https://mmg.whatsapp.net/fake", DirectPath: "/fake/" + string(kind),
		MediaKey: make([]byte, 32), FileEncSHA256: sum[:], FileSHA256: sum[:], FileLength: uint64(len(data))}, nil
}

func (f *fakeClient) AddEventHandler(h whatsmeow.EventHandler) uint32 {
	return f.AddEventHandlerWithSuccessStatus(func(evt any) bool { h(evt); return true })
}

func (f *fakeClient) AddEventHandlerWithSuccessStatus(h whatsmeow.EventHandlerWithSuccessStatus) uint32 {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.nextID++
	f.handlers[f.nextID] = h
	f.order = append(f.order, f.nextID)
	return f.nextID
}

func (f *fakeClient) RemoveEventHandler(id uint32) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	_, ok := f.handlers[id]
	delete(f.handlers, id)
	return ok
}

func (f *fakeClient) IsOnWhatsApp(_ context.Context, phones []string) ([]types.IsOnWhatsAppResponse, error) {
	f.record(fakeCall{Op: "IsOnWhatsApp", Phones: phones})
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]types.IsOnWhatsAppResponse, 0, len(phones))
	for _, p := range phones {
		r, ok := f.onWA[p]
		if !ok {
			r = types.IsOnWhatsAppResponse{Query: p}
		}
		out = append(out, r)
	}
	return out, nil
}

func (f *fakeClient) Connect() error {
	f.record(fakeCall{Op: "Connect"})
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.connectErrs) > 0 {
		err := f.connectErrs[0]
		f.connectErrs = f.connectErrs[1:]
		return err
	}
	f.connected = true
	return nil
}

func (f *fakeClient) Disconnect() {
	f.record(fakeCall{Op: "Disconnect"})
	f.mu.Lock()
	defer f.mu.Unlock()
	f.connected = false
}

func (f *fakeClient) IsConnected() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.connected
}

func (f *fakeClient) IsLoggedIn() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.loggedIn
}

// GetQRChannel returns f.qr, which the test feeds.
func (f *fakeClient) GetQRChannel(context.Context) (<-chan whatsmeow.QRChannelItem, error) {
	f.record(fakeCall{Op: "GetQRChannel"})
	return f.qr, nil
}

func (f *fakeClient) PairPhone(_ context.Context, phone string, _ bool, _ whatsmeow.PairClientType, _ string) (string, error) {
	f.record(fakeCall{Op: "PairPhone", Phones: []string{phone}})
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.pairCode, f.pairErr
}
