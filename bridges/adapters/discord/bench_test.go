package discord

import (
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/adapters/discord/discordfake"
)

// BenchmarkInteractionAck measures click → acknowledgement of a card
// button through the real discordgo client and the fake gateway (Discord
// wants it within 3 s; the core is not waited for). It reports the
// latency as ns/op and the worst one as max-ms.
// Run: go test ./bridges/adapters/discord -run '^$' -bench InteractionAck -benchtime 50x
func BenchmarkInteractionAck(b *testing.B) {
	f := discordfake.New(b)
	r := startReady(b, f)
	id := f.SendMessage("100", guild, "u1", "deploy it", true)
	var key bridges.ConversationKey
	for deadline := time.After(wait); key.Thread == ""; {
		r.rec.mu.Lock()
		for _, m := range r.rec.msgs {
			if m.MsgID == id {
				key = m.Key
			}
		}
		ch := r.rec.changed
		r.rec.mu.Unlock()
		if key.Thread != "" {
			break
		}
		select {
		case <-ch:
		case <-deadline:
			b.Fatal("the mention was not delivered")
		}
	}
	ref, err := r.Post(b.Context(), key, bridges.Message{Text: "allow?", CardID: "c1", Buttons: []bridges.Button{{ID: "allow", Label: "Allow"}}})
	if err != nil {
		b.Fatal(err)
	}
	var worst time.Duration
	n := 0
	b.ResetTimer()
	for b.Loop() {
		n++
		f.Click(key.Thread, ref.ID, "u1", "c:c1:allow")
		if err := f.Wait(wait, func() bool { return len(f.InteractionResponses()) >= n }); err != nil {
			b.Fatal(err)
		}
		worst = max(worst, f.InteractionResponses()[n-1].Latency())
	}
	b.ReportMetric(float64(worst.Microseconds())/1000, "max-ms")
	if rs := f.InteractionResponses(); len(rs) > 0 && rs[len(rs)-1].Late {
		b.Errorf("late acknowledgement: %+v", rs[len(rs)-1])
	}
}
