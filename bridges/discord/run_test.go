package discord

import (
	"errors"
	"fmt"
	"strings"
	"testing"

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

func TestFatalGatewayCloses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		opts     discordfake.Options
		token    string // overrides the configured token
		midRun   func(f *discordfake.Fake)
		want     error
		mentions []string
	}{
		{
			name: "4014 at connect", opts: discordfake.Options{DenyMessageContent: true},
			want: ErrDisallowedIntent, mentions: []string{"MESSAGE_CONTENT", "Privileged Gateway Intents", "4014"},
		},
		{
			name: "4014 while running",
			midRun: func(f *discordfake.Fake) {
				f.SetDenyMessageContent(true)
				f.CloseWith(discordfake.CloseDisallowedIntents)
			},
			want: ErrDisallowedIntent, mentions: []string{"MESSAGE_CONTENT", "Message Content Intent"},
		},
		{
			name: "4004 bad token", token: "not-the-token-s3cr3t",
			want: ErrAuthentication, mentions: []string{"4004", "token"},
		},
		{
			name:   "4013 while running",
			midRun: func(f *discordfake.Fake) { f.CloseWith(discordfake.CloseInvalidIntents) },
			want:   ErrGatewayFatal, mentions: []string{"4013"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := discordfake.NewWithOptions(t, tc.opts)
			bot := testBot(f)
			if tc.token != "" {
				bot.Discord.Token = tc.token
			}
			var r *running
			if tc.midRun != nil {
				r = startReady(t, f)
				tc.midRun(f)
			} else {
				r = start(t, newTestBridge(t, bot))
			}
			err := r.runErr(t)
			if !errors.Is(err, tc.want) {
				t.Fatalf("Run = %v, want %v", err, tc.want)
			}
			for _, s := range tc.mentions {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not mention %q", err, s)
				}
			}
			if tc.token != "" && strings.Contains(err.Error(), tc.token) {
				t.Errorf("error leaks the token: %v", err)
			}
			if !strings.Contains(err.Error(), botName) {
				t.Errorf("error %q does not name the bot", err)
			}
		})
	}
}
