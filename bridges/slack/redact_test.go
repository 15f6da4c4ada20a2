package slack

import (
	"strings"
	"testing"
)

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
