package discord

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/adapters/discord/discordfake"
	"github.com/agentbridge/agentbridge/bridges/kits/bridgetest"
	"github.com/agentbridge/agentbridge/bridges/kits/platformtest"
	"github.com/agentbridge/agentbridge/internal/testkit"
	"github.com/bwmarrin/discordgo"
)

// TestReconnectKeepsMessages: whatever ends the gateway connection in the
// middle of a conversation, the messages sent before, during and after
// reach the core exactly once.
func TestReconnectKeepsMessages(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		replay int // events the fake re-sends on RESUME (duplicates)
		fault  func(f *discordfake.Fake)
		// duringLost: a message sent while the session is invalid is
		// lost on Discord too (op 9 means "start over").
		resume bool
	}{
		{"op 7 reconnect", 0, (*discordfake.Fake).Reconnect, true},
		{"dropped socket", 0, (*discordfake.Fake).DropSocket, true},
		{"resume replays duplicates", 5, (*discordfake.Fake).DropSocket, true},
		{"close 4000", 0, func(f *discordfake.Fake) { f.CloseWith(discordfake.CloseUnknownError) }, true},
		{"op 9 invalid session", 0, (*discordfake.Fake).InvalidSession, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := discordfake.New(t)
			r := startReady(t, f)
			thread := r.rec.waitMsg(t, f.SendMessage("100", guild, "u1", "long task", true)).Key.Thread
			before := f.SendMessage(thread, guild, "u1", "before", false)
			r.rec.waitMsg(t, before)

			f.SetResumeReplay(tc.replay)
			tc.fault(f)
			ids := []string{before}
			if tc.resume {
				// Sent while the client is away: replayed on RESUME.
				ids = append(ids, f.SendMessage(thread, guild, "u1", "during", false))
				if err := f.WaitGateway(func(s discordfake.GatewayStats) bool { return s.Resumes == 1 && s.Live == 1 }, wait); err != nil {
					t.Fatalf("no resume: %v (%+v)", err, f.GatewayStats())
				}
			} else if err := f.WaitGateway(func(s discordfake.GatewayStats) bool { return s.Identifies == 2 && s.Live == 1 }, wait); err != nil {
				t.Fatalf("no new session: %v (%+v)", err, f.GatewayStats())
			}
			for i := range 3 {
				ids = append(ids, f.SendMessage(thread, guild, "u1", fmt.Sprintf("after %d", i), false))
			}
			for _, id := range ids {
				r.rec.waitMsg(t, id)
			}
			// A last message proves nothing else is still on its way.
			r.rec.waitMsg(t, f.SendMessage("dm-last", "", "u1", "last", false))
			for id, n := range countIDs(r.rec.messages()) {
				if n != 1 {
					t.Errorf("message %s delivered %d times", id, n)
				}
			}
			var order []string
			for _, m := range r.rec.messages() {
				order = append(order, m.Text)
			}
			t.Logf("delivered in order: %q; gateway %+v", order, f.GatewayStats())
		})
	}
}

// Permanent refusals end Run with a Failure that says what happened and
// what to do, without the token; the bot is not reported connected when
// the refusal comes at connect time.
func TestFatalGatewayCloses(t *testing.T) {
	t.Parallel()
	const leaked = "not-the-token-s3cr3t"
	tests := []struct {
		name     string
		opts     discordfake.Options
		token    string // overrides the configured token
		midRun   func(f *discordfake.Fake)
		want     error
		remedy   string
		reason   []string
		hint     []string
		statesOK []bridges.ConnState // reported before the failure
	}{
		{
			name: "4014 at connect", opts: discordfake.Options{DenyMessageContent: true},
			want: ErrDisallowedIntent, remedy: bridges.RemedyRestart,
			reason:   []string{"MESSAGE_CONTENT", "4014"},
			hint:     []string{`enable "Message Content Intent"`, "Privileged Gateway Intents", "restart"},
			statesOK: []bridges.ConnState{bridges.ConnStarting},
		},
		{
			name: "4014 while running",
			midRun: func(f *discordfake.Fake) {
				f.SetDenyMessageContent(true)
				f.CloseWith(discordfake.CloseDisallowedIntents)
			},
			want: ErrDisallowedIntent, remedy: bridges.RemedyRestart,
			reason:   []string{"MESSAGE_CONTENT", "4014"},
			hint:     []string{"Message Content Intent"},
			statesOK: []bridges.ConnState{bridges.ConnStarting, bridges.ConnConnected},
		},
		{
			name: "invalid token on GET /gateway", token: leaked,
			want: ErrAuthentication, remedy: bridges.RemedyRestart,
			reason:   []string{"rejected the bot token", "401", "GET /gateway"},
			hint:     []string{"Reset Token", "discord.token"},
			statesOK: []bridges.ConnState{bridges.ConnStarting},
		},
		{
			name:   "4004 after a token reset",
			midRun: func(f *discordfake.Fake) { f.ResetToken(leaked) },
			want:   ErrAuthentication, remedy: bridges.RemedyRestart,
			reason:   []string{"rejected the bot token", "4004"},
			hint:     []string{"Reset Token"},
			statesOK: []bridges.ConnState{bridges.ConnStarting, bridges.ConnConnected},
		},
		{
			name:   "4013 while running",
			midRun: func(f *discordfake.Fake) { f.CloseWith(discordfake.CloseInvalidIntents) },
			want:   ErrGatewayFatal, remedy: bridges.RemedyUpgrade,
			reason:   []string{"4013", "intents"},
			hint:     []string{"upgrade the bridge"},
			statesOK: []bridges.ConnState{bridges.ConnStarting, bridges.ConnConnected},
		},
		{
			name:   "4012 while running",
			midRun: func(f *discordfake.Fake) { f.CloseWith(discordfake.CloseInvalidAPIVersion) },
			want:   ErrGatewayFatal, remedy: bridges.RemedyUpgrade,
			reason:   []string{"4012", "API version"},
			hint:     []string{"upgrade the bridge"},
			statesOK: []bridges.ConnState{bridges.ConnStarting, bridges.ConnConnected},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := discordfake.NewWithOptions(t, tc.opts)
			bot := testBot(f)
			if tc.token != "" {
				bot.Settings.(*Config).Token = tc.token
			}
			var r *running
			if tc.midRun != nil {
				r = startReady(t, f)
				r.rec.WaitStates(t, 2, wait)
				tc.midRun(f)
			} else {
				r = runRecorded(t, newTestBridge(t, bot))
			}
			err := r.Err(t)
			if !errors.Is(err, tc.want) {
				t.Fatalf("Run = %v, want %v", err, tc.want)
			}
			platformtest.WantFailure(t, err, tc.remedy, tc.reason, tc.hint)
			if strings.Contains(err.Error(), leaked) || strings.Contains(err.Error(), discordfake.DefaultToken) {
				t.Errorf("error leaks the token: %v", err)
			}
			if !strings.Contains(err.Error(), botName) {
				t.Errorf("error %q does not name the bot", err)
			}
			if got := platformtest.StateNames(r.rec.States()); !slices.Equal(got, tc.statesOK) {
				t.Errorf("states before the failure = %v, want %v", got, tc.statesOK)
			}
		})
	}
}

// The adapter reports starting, connected after READY, reconnecting when
// the connection drops (with the count of failed attempts and the last
// error), and connected again after RESUMED.
func TestConnectionStates(t *testing.T) {
	t.Parallel()
	f := discordfake.New(t)
	r := startReady(t, f)
	r.rec.WaitStates(t, 2, wait)
	f.RefuseGateway(2)
	f.DropSocket()
	got := r.rec.WaitStates(t, 6, wait)
	bridgetest.CheckStates(t, got, []bridgetest.WantState{
		{State: bridges.ConnStarting, Attempt: 0, Reason: ""},
		{State: bridges.ConnConnected, Attempt: 0, Reason: ""},
		{State: bridges.ConnReconnecting, Attempt: 0, Reason: "the gateway connection dropped"},
		{State: bridges.ConnReconnecting, Attempt: 1, Reason: "bad handshake"},
		{State: bridges.ConnReconnecting, Attempt: 2, Reason: "bad handshake"},
		{State: bridges.ConnConnected, Attempt: 0, Reason: ""},
	})
	if err := f.WaitGateway(func(s discordfake.GatewayStats) bool { return s.Resumes == 1 && s.Live == 1 }, wait); err != nil {
		t.Fatalf("the session was not resumed: %v (%+v)", err, f.GatewayStats())
	}
	// Still delivering.
	r.rec.waitMsg(t, f.SendMessage("dm-1", "", "u1", "still there?", false))
}

// Discord unreachable for ten minutes at start-up (GET /gateway answers
// 503, gateway handshakes are refused) and then for thirty minutes while
// connected (the socket drops, the same refusals), in virtual time and
// with the production back-off: Run never gives up; the real core shows
// the bot reconnecting all along, since the start of each outage, with
// the last error and a growing attempt count; no wait exceeds the cap;
// the first attempt after the network's return comes within a minute, and
// the bot answers right after (the session resumed). What must not be
// lost: the bot itself, and the message sent after the outage.
func TestGatewayOutagesReconnectForever(t *testing.T) {
	t.Parallel()
	f := discordfake.New(t)
	down := func() { f.FailGatewayLookup(-1); f.RefuseGateway(-1) }
	restore := func() { f.FailGatewayLookup(0); f.RefuseGateway(0) }
	down() // before the bot starts
	b := newTestBridge(t, testBot(f))
	var outage bridgetest.Outage
	b.reconnect = bridges.Backoff{Pause: outage.Pause} // production bounds, virtual time
	cfg := bridgetest.Config(t, testBot(f))
	cfg.StatusDelay = time.Hour
	core := bridgetest.RunCore(t, cfg, map[string]bridges.Platform{botName: b}, nil)
	state := bridgetest.BotState(core.Core, botName)
	answered := func(channel, text string) {
		t.Helper()
		if _, err := f.WaitForMessage(func(m discordfake.Message) bool {
			return m.ChannelID == channel && strings.Contains(m.Content, "pong: "+text)
		}, wait); err != nil {
			t.Fatalf("%q not answered after the outage: %v", text, err)
		}
	}
	connected := func(what string, stats func(discordfake.GatewayStats) bool) {
		t.Helper()
		if err := f.WaitGateway(func(s discordfake.GatewayStats) bool { return s.Live == 1 && stats(s) }, wait); err != nil {
			t.Fatalf("%s: %v (%+v)", what, err, f.GatewayStats())
		}
		testkit.WaitUntil(t, "connected", wait, func() bool { return state().State == bridges.ConnConnected })
	}

	outage.Begin(core, botName, 10*time.Minute, restore)
	connected("connect after a 10-minute outage at start-up", func(s discordfake.GatewayStats) bool { return s.Identifies == 1 })
	n := outage.Check(t, bridges.DefaultReconnectMax, time.Minute)
	t.Logf("start-up outage: %d waits, %d handshakes refused, %d GET /gateway", n, f.GatewayStats().Refused, f.RequestCount(discordfake.RouteGateway))
	if f.RequestCount(discordfake.RouteGateway) < n {
		t.Errorf("GET /gateway asked %d times for %d attempts", f.RequestCount(discordfake.RouteGateway), n)
	}
	thread := f.SendMessage("100", guild, "u1", "there?", true)
	answered(thread, "there?")

	outage.Begin(core, botName, 30*time.Minute, restore)
	down()
	f.DropSocket()
	connected("resume after a 30-minute outage", func(s discordfake.GatewayStats) bool { return s.Resumes == 1 })
	n = outage.Check(t, bridges.DefaultReconnectMax, time.Minute)
	t.Logf("mid-run outage: %d waits", n)
	f.SendMessage(thread, guild, "u1", "back?", false)
	answered(thread, "back?")
	if s := state(); s.State != bridges.ConnConnected || s.Attempt != 0 {
		t.Errorf("state after the outage = %+v", s)
	}
}

func TestFrameParserFindsCloseCodes(t *testing.T) {
	t.Parallel()
	var stream bytes.Buffer
	stream.WriteString("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n")
	stream.Write(frame(1, []byte(`{"op":10,"d":{"heartbeat_interval":41250}}`), false))
	stream.Write(frame(1, bytes.Repeat([]byte("x"), 300), false))    // 16-bit length
	stream.Write(frame(2, bytes.Repeat([]byte{0x88}, 70000), false)) // 64-bit length, bytes that look like close opcodes
	stream.Write(frame(9, nil, false))                               // ping, empty
	stream.Write(frame(8, closePayload(1012, "restart"), true))      // masked
	stream.Write(frame(8, nil, false))                               // close without a code
	stream.Write(frame(8, closePayload(4014, "Disallowed intent(s)."), false))
	data := stream.Bytes()
	want := []int{1012, 1005, 4014}

	chunkings := map[string]func() []int{
		"all at once": func() []int { return []int{len(data)} },
		"byte by byte": func() []int {
			s := make([]int, len(data))
			for i := range s {
				s[i] = 1
			}
			return s
		},
		"random": func() []int {
			r := rand.New(rand.NewPCG(1, 2))
			var s []int
			for left := len(data); left > 0; {
				n := min(left, 1+r.IntN(700))
				s = append(s, n)
				left -= n
			}
			return s
		},
	}
	for name, chunks := range chunkings {
		t.Run(name, func(t *testing.T) {
			var got []int
			p := frameParser{onClose: func(code int) { got = append(got, code) }}
			off := 0
			for _, n := range chunks() {
				p.feed(data[off : off+n])
				off += n
			}
			if !slices.Equal(got, want) {
				t.Errorf("close codes = %v, want %v", got, want)
			}
		})
	}
}

// frame builds a server→client websocket frame (or a masked one).
func frame(opcode byte, payload []byte, masked bool) []byte {
	b := []byte{0x80 | opcode}
	mask := byte(0)
	if masked {
		mask = 0x80
	}
	switch n := len(payload); {
	case n < 126:
		b = append(b, mask|byte(n))
	case n <= 0xffff:
		b = append(b, mask|126)
		b = binary.BigEndian.AppendUint16(b, uint16(n))
	default:
		b = append(b, mask|127)
		b = binary.BigEndian.AppendUint64(b, uint64(n))
	}
	if masked {
		key := []byte{1, 2, 3, 4}
		b = append(b, key...)
		p := slices.Clone(payload)
		for i := range p {
			p[i] ^= key[i%4]
		}
		payload = p
	}
	return append(b, payload...)
}

func closePayload(code uint16, reason string) []byte {
	return append(binary.BigEndian.AppendUint16(nil, code), reason...)
}

// blockFirst is a recorder whose first HandleMessage waits for release
// (a busy core), after closing entered.
type blockFirst struct {
	*recorder
	once    sync.Once
	entered chan struct{}
	release chan struct{}
}

func (h *blockFirst) HandleMessage(ctx context.Context, m bridges.Inbound) error {
	h.once.Do(func() {
		close(h.entered)
		<-h.release
	})
	return h.recorder.HandleMessage(ctx, m)
}

// TestShutdownHandsOverQueuedMessages: messages the gateway delivered
// while the worker was busy still reach the core when Run stops (Discord
// does not send them again), and Run returns only after that.
func TestShutdownHandsOverQueuedMessages(t *testing.T) {
	t.Parallel()
	f := discordfake.New(t)
	b := newTestBridge(t, testBot(f))
	h := &blockFirst{recorder: newRecorder(), entered: make(chan struct{}), release: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	closed := make(chan struct{})
	var closeOnce sync.Once
	b.session.AddHandler(func(*discordgo.Session, *discordgo.Disconnect) { closeOnce.Do(func() { close(closed) }) })
	errc := make(chan error, 1)
	go func() { errc <- b.Run(ctx, h) }()
	if err := f.WaitGateway(func(s discordfake.GatewayStats) bool { return s.Live == 1 }, wait); err != nil {
		t.Fatalf("gateway: %v", err)
	}

	ids := []string{f.SendMessage("dm-1", "", "u1", "first", false)}
	select {
	case <-h.entered: // the worker is busy with the first message
	case <-time.After(wait):
		t.Fatal("the first message did not reach the core")
	}
	card, err := b.Post(ctx, bridges.ConversationKey{Bot: botName, Channel: "dm-1"},
		bridges.Message{Text: "allow?", CardID: "c1", Buttons: []bridges.Button{{ID: "allow", Label: "Allow"}}})
	if err != nil {
		t.Fatalf("post card: %v", err)
	}
	for i := range 10 {
		ids = append(ids, f.SendMessage("dm-1", "", "u1", fmt.Sprintf("queued %d", i), false))
	}
	// The click comes after them on the same connection and is handled at
	// once on its own goroutine: when the core has it, the messages are in
	// the queue.
	f.Click("dm-1", card.ID, "u1", "c:c1:allow")
	h.waitAction(t)

	// Stop Run, and let the core go on only once the gateway is closed
	// (discordgo reports Disconnect at the end of Close, after which Run
	// stops taking messages): the queued ones must still be handed over.
	cancel()
	select {
	case <-closed:
	case <-time.After(wait):
		t.Fatal("the gateway was not closed after cancel")
	}
	time.Sleep(50 * time.Millisecond) // Run's shutdown goes on from Close
	close(h.release)
	select {
	case err := <-errc:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(wait):
		t.Fatal("Run did not return after cancel")
	}
	got := countIDs(h.messages())
	for _, id := range ids {
		if got[id] != 1 {
			t.Errorf("message %s delivered %d times, want 1 (delivered: %v)", id, got[id], got)
		}
	}
}
