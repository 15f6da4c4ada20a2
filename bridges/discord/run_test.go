package discord

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/bridgetest"
	"github.com/agentbridge/agentbridge/bridges/discord/discordfake"
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
				r.rec.waitStates(t, 2)
				tc.midRun(f)
			} else {
				r = start(t, newTestBridge(t, bot))
			}
			err := r.runErr(t)
			if !errors.Is(err, tc.want) {
				t.Fatalf("Run = %v, want %v", err, tc.want)
			}
			f2, ok := errors.AsType[*bridges.Failure](err)
			if !ok {
				t.Fatalf("Run = %v (%T), want a *bridges.Failure", err, err)
			}
			if f2.Remedy != tc.remedy {
				t.Errorf("remedy = %q, want %q", f2.Remedy, tc.remedy)
			}
			for _, s := range tc.reason {
				if !strings.Contains(f2.Reason, s) {
					t.Errorf("reason %q does not mention %q", f2.Reason, s)
				}
			}
			for _, s := range tc.hint {
				if !strings.Contains(f2.Hint, s) {
					t.Errorf("hint %q does not mention %q", f2.Hint, s)
				}
			}
			if strings.Contains(err.Error(), leaked) || strings.Contains(err.Error(), discordfake.DefaultToken) {
				t.Errorf("error leaks the token: %v", err)
			}
			if !strings.Contains(err.Error(), botName) {
				t.Errorf("error %q does not name the bot", err)
			}
			if got := stateNames(r.rec.stateList()); !slices.Equal(got, tc.statesOK) {
				t.Errorf("states before the failure = %v, want %v", got, tc.statesOK)
			}
		})
	}
}

func stateNames(states []bridges.BotState) []bridges.ConnState {
	var out []bridges.ConnState
	for _, s := range states {
		out = append(out, s.State)
	}
	return out
}

// The adapter reports starting, connected after READY, reconnecting when
// the connection drops (with the count of failed attempts and the last
// error), and connected again after RESUMED.
func TestConnectionStates(t *testing.T) {
	t.Parallel()
	f := discordfake.New(t)
	r := startReady(t, f)
	r.rec.waitStates(t, 2)
	f.RefuseGateway(2)
	f.DropSocket()
	got := r.rec.waitStates(t, 6)
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

// Reconnect attempts are capped: after maxFailures failures in a row Run
// gives up with a Failure (restart) naming the count and the last error.
func TestReconnectAttemptsCapped(t *testing.T) {
	t.Parallel()
	f := discordfake.New(t)
	b := newTestBridge(t, testBot(f))
	b.maxFailures = 3
	r := start(t, b)
	r.rec.waitStates(t, 2)
	f.RefuseGateway(-1)
	f.DropSocket()
	err := r.runErr(t)
	fail, ok := errors.AsType[*bridges.Failure](err)
	if !ok || fail.Remedy != bridges.RemedyRestart || !strings.Contains(fail.Reason, "after 3 failed attempts") ||
		!strings.Contains(err.Error(), "bad handshake") || fail.Hint == "" {
		t.Fatalf("Run = %v (%+v), want a restart Failure after 3 attempts with the last error", err, fail)
	}
	got := stateNames(r.rec.stateList())
	want := []bridges.ConnState{bridges.ConnStarting, bridges.ConnConnected,
		bridges.ConnReconnecting, bridges.ConnReconnecting, bridges.ConnReconnecting}
	if !slices.Equal(got, want) {
		t.Errorf("states = %v, want %v", got, want)
	}
	if st := f.GatewayStats(); st.Refused != 3 {
		t.Errorf("%d handshakes tried after the drop, want 3", st.Refused)
	}
}
