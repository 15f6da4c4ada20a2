package markdown

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestWrapEmphasis(t *testing.T) {
	for _, tc := range []struct {
		before, content string
		next            rune
		want            string
	}{
		{"", "bold", utf8.RuneError, "*bold*"},
		{"a ", " bold ", utf8.RuneError, "a  *bold* "},
		{"un", "bold", 'y', "un" + ZWSP + "*bold*" + ZWSP},
		{"x", "   ", 'y', "x   "},
		{"", "bold", '.', "*bold*"},
	} {
		var b strings.Builder
		b.WriteString(tc.before)
		WrapEmphasis(&b, tc.content, "*", tc.next)
		if b.String() != tc.want {
			t.Errorf("WrapEmphasis(%q after %q, next %q) = %q, want %q", tc.content, tc.before, tc.next, b.String(), tc.want)
		}
	}
	if got := string(LiteralMarkers([]byte(`a\*b\_c\~d` + "\\`" + `e\n`))); got != "a∗b＿c∼dˋe\\n" {
		t.Errorf("LiteralMarkers = %q", got)
	}
}
