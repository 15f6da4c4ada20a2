package slack

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestConvertSlackText(t *testing.T) {
	names := map[string]string{"U2": "Bea"}
	lookup := func(id string) string {
		if n, ok := names[id]; ok {
			return n
		}
		return id
	}
	tests := []struct{ name, in, want string }{
		{"mention stripped", "<@UBOT> do it", "do it"},
		{"mention with label stripped", "<@UBOT|bot> do it", "do it"},
		{"mention in the middle", "please <@UBOT> do it", "please do it"},
		{"other user resolved", "ask <@U2> about it", "ask @Bea about it"},
		{"other user with label", "ask <@U3|carl>", "ask @carl"},
		{"unknown user stays id", "ask <@U4>", "ask @U4"},
		{"channel", "see <#C1|general>", "see #general"},
		{"special", "<!here> look", "@here look"},
		{"subteam", "<!subteam^S1|@devs> look", "@devs look"},
		{"link with label", "<https://e.com/a?b=1&amp;c=2|the page>", "[the page](https://e.com/a?b=1&c=2)"},
		{"bare link", "<https://e.com>", "https://e.com"},
		{"auto-linked domain", "<http://e.com|e.com>", "e.com"},
		{"mailto", "<mailto:a@e.com|a@e.com>", "a@e.com"},
		{"entities", "a &lt; b &amp;&amp; c &gt; d", "a < b && c > d"},
		{"escaped entity stays", "&amp;lt;", "&lt;"},
		{"unbalanced", "x < y", "x < y"},
		{"multiline kept", "<@UBOT>\nline1\n  line2", "line1\n  line2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := convertSlackText(tt.in, "UBOT", lookup); got != tt.want {
				t.Errorf("convertSlackText(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func FuzzConvertSlackText(f *testing.F) {
	for _, s := range []string{"<@UBOT> hi", "<https://e.com|x>", "&amp;lt;", "<<@UBOT>>", "<!here|@here>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := convertSlackText(s, "UBOT", nil) // must not panic
		if !utf8.ValidString(out) && utf8.ValidString(s) {
			t.Fatalf("invalid UTF-8 from %q", s)
		}
		// A leading bot mention is removed without a trace.
		if !strings.ContainsAny(s, "<>") {
			if with, without := convertSlackText("<@UBOT> "+s, "UBOT", nil), convertSlackText(s, "UBOT", nil); with != without {
				t.Fatalf("mention left a trace: %q vs %q", with, without)
			}
		}
	})
}
