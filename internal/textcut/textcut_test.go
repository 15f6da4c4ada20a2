package textcut

import "testing"

func TestOneLineAndTruncate(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"  a\n\tb  c ", 10, "a b c"},
		{"exactly10!", 10, "exactly10!"},
		{"eleven runes", 10, "eleven ru…"},
		{"ééééé", 3, "éé…"},
		{"abc", 0, "…"},
	} {
		if got := OneLine(tc.in, tc.n); got != tc.want {
			t.Errorf("OneLine(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
	if got := Truncate("a\nbcdef", 4); got != "a\nb…" {
		t.Errorf("Truncate kept %q, want the newline kept", got)
	}
}

func TestDefaults(t *testing.T) {
	if OrBlank("", "d") != "d" || OrBlank(" \n", "d") != "d" || OrBlank(" x", "d") != " x" {
		t.Error("OrBlank: empty and blank take the default, the rest is kept as is")
	}
}
