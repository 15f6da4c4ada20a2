package slack

import (
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
)

// BenchmarkClickAck measures a card click's Socket Mode envelope → its ack
// through slack-go's socketmode client and the fake (Slack wants it within
// 3 s); ns/op is the mean, max-ms the worst.
// Run: go test ./bridges/adapters/slack -run '^$' -bench ClickAck -benchtime 50x
func BenchmarkClickAck(b *testing.B) {
	e := startOnFake(b)
	root := e.fake.Mention("C1", "U1", "go", "")
	ref, err := e.b.Post(b.Context(), threadKey(root), bridges.Message{Text: "allow?", CardID: "c1",
		Buttons: []bridges.Button{{ID: "allow", Label: "Allow"}}})
	if err != nil {
		b.Fatal(err)
	}
	var worst time.Duration
	for b.Loop() {
		env := e.fake.Click("C1", ref.ID, "U1", "allow", "")
		ack, err := e.fake.WaitForAck(env, waitLong)
		if err != nil {
			b.Fatal(err)
		}
		sent, _ := e.fake.Envelope(env)
		worst = max(worst, ack.At.Sub(sent.Sent))
	}
	b.ReportMetric(float64(worst.Microseconds())/1000, "max-ms")
}
