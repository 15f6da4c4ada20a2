package web

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/agentbridge/agentbridge/store"
)

// TestFindSnippet: the text around a case-insensitive match, on one line,
// cut with "…" on the side it was cut.
func TestFindSnippet(t *testing.T) {
	long := "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma tau upsilon phi chi psi omega"
	for _, tc := range []struct {
		text, q string
		want    *snippet
	}{
		{"Deploy the\nAPI   today", "api", &snippet{"Deploy the ", "API", " today"}},
		{"nothing here", "api", nil},
		{long, "Sigma", &snippet{"…kappa lambda mu nu xi omicron pi rho ", "sigma", " tau upsilon phi chi psi omega"}},
		{long, "alpha", &snippet{"", "alpha", " beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi…"}},
		{"ÉTÉ à Paris", "été", &snippet{"", "ÉTÉ", " à Paris"}},
	} {
		got := findSnippet(tc.text, tc.q)
		if (got == nil) != (tc.want == nil) || got != nil && *got != *tc.want {
			t.Errorf("findSnippet(%q, %q) = %+v, want %+v", tc.text, tc.q, got, tc.want)
		}
	}
}

// TestSearchSnippetOldMessage: a search result shows the snippet of a
// match older than the newest 500 messages of the conversation (all of its
// messages are searched), the newest matching message first.
func TestSearchSnippetOldMessage(t *testing.T) {
	cfg := testConfig(t, "127.0.0.1:9464", usersYAML)
	st := testStore(t)
	_, srv, _ := newTestConsole(t, cfg, st)
	ctx := context.Background()
	key := store.ConversationKey{Bot: "console", Channel: "ana", Thread: "threadold01"}
	add := func(id, text string) {
		t.Helper()
		if _, err := st.AddWebMessage(ctx, store.WebMessage{ID: id, Key: key, Author: "ana", Text: text}); err != nil {
			t.Fatal(err)
		}
	}
	add("m-old", "first the Zanzibar rollout, then the rest")
	for i := range 520 {
		add(fmt.Sprintf("m-%03d", i), fmt.Sprintf("filler %d", i))
	}
	ana := newClient(t, srv.URL)
	ana.signIn(anaToken)
	if list := mustGet(t, ana, "/threads?q=zanzibar"); !strings.Contains(list, `first the <mark>Zanzibar</mark> rollout, then the rest`) {
		t.Errorf("no snippet for a match older than the newest 500 messages: %s", list)
	}
}
