package slack

import (
	"strings"
	"testing"
	"time"
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

func TestTSTime(t *testing.T) {
	got := tsTime("1700000000.000123")
	if want := time.Unix(1700000000, 123000); !got.Equal(want) {
		t.Errorf("tsTime = %v, want %v", got, want)
	}
	if !tsTime("garbage").IsZero() {
		t.Error("bad ts should give the zero time")
	}
}

func TestRedactor(t *testing.T) {
	r := newRedactor("xoxb-secret-1", "xapp-secret-2")
	in := `dial wss://wss.slack.com/link/?ticket=abc123&app_id=A1: token xoxb-secret-1 and xoxp-other-9, "xapp-1-zzz"`
	got := r.String(in)
	for _, leak := range []string{"secret-1", "secret-2", "abc123", "other-9", "1-zzz"} {
		if strings.Contains(got, leak) {
			t.Errorf("redacted text still has %q: %s", leak, got)
		}
	}
	if !strings.Contains(got, "app_id=A1") {
		t.Errorf("redaction removed too much: %s", got)
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
