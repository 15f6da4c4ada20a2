package decode

import "testing"

func TestNearestKey(t *testing.T) {
	known := map[string]int{"idle_timeout": 0, "approval_timeout": 0, "max_live": 0, "model": 0, "mode": 0,
		"warm_spares": 0, "workdir": 0, "allowed_tools": 0, "disallowed_tools": 0, "env": 0}
	for _, c := range []struct{ key, want string }{
		{"idle_timout", "idle_timeout"},         // a letter missing
		{"idel_timeout", "idle_timeout"},        // two letters swapped
		{"Idle-Timeout", "idle_timeout"},        // case and dash
		{"max-live", "max_live"},                // dash for underscore
		{"warm_spare", "warm_spares"},           // plural
		{"modell", "model"},                     // one letter too many, nearer to model than to mode
		{"workdirs", "workdir"},                 // one extra letter
		{"allowed_tool", "allowed_tools"},       // not disallowed_tools
		{"envv", "env"},                         // short key, one edit
		{"sandbox", ""},                         // nothing near
		{"x", ""},                               // too short to guess
		{"approval", ""},                        // a prefix is not a typo
		{"completely_different_key", ""},        // far from everything
		{"idle_timeout_seconds", ""},            // more than 3 edits
		{"ALLOWED_TOOLS", "allowed_tools"},      // case only
		{"disalowed_tools", "disallowed_tools"}, // a letter missing, the longer key
	} {
		if got := NearestKey(c.key, known); got != c.want {
			t.Errorf("NearestKey(%q) = %q, want %q", c.key, got, c.want)
		}
	}
}

func TestEditDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"a", "", 1}, {"", "abc", 3}, {"kitten", "sitting", 3},
		{"ab", "ba", 1}, {"abc", "acb", 1}, {"model", "modle", 1}, {"héllo", "hello", 1},
	} {
		if got := editDistance(c.a, c.b); got != c.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}
