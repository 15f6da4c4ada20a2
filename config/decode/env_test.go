package decode

import (
	"strings"
	"testing"
)

func TestExpandEnv(t *testing.T) {
	vars := map[string]string{"A": "alpha", "EMPTY": "", "B_2": "b"}
	env := func(k string) (string, bool) {
		v, ok := vars[k]
		return v, ok
	}
	cases := []struct {
		in, out string
		changed bool
		errs    []string // substrings, one per expected error
	}{
		{"plain", "plain", false, nil},
		{"${A}", "alpha", true, nil},
		{"x-${A}-${B_2}-y", "x-alpha-b-y", true, nil},
		{"${UNSET:-fallback}", "fallback", true, nil},
		{"${EMPTY:-fallback}", "fallback", true, nil},
		{"${A:-fallback}", "alpha", true, nil},
		{"${UNSET:-}", "", true, nil},
		{"${UNSET:-a:-b}", "a:-b", true, nil},
		{"${EMPTY}", "", true, nil},
		{"$$", "$", false, nil},
		{"cost $$5 and $${A}", "cost $5 and ${A}", false, nil},
		{"$HOME $5 trailing $", "$HOME $5 trailing $", false, nil},
		{"${UNSET}", "", true, []string{"environment variable UNSET is not set"}},
		{"${U1} ${U2}", " ", true, []string{"U1 is not set", "U2 is not set"}},
		{"${A", "${A", false, []string{`unterminated "${"`}},
		{"${}", "", false, []string{`bad environment variable name ""`}},
		{"${1A}", "", false, []string{`bad environment variable name "1A"`}},
		{"${A B}", "", false, []string{`bad environment variable name "A B"`}},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			out, changed, errs := expandEnv(tc.in, env)
			if out != tc.out || changed != tc.changed {
				t.Errorf("expandEnv(%q) = %q, changed=%v; want %q, %v", tc.in, out, changed, tc.out, tc.changed)
			}
			if len(errs) != len(tc.errs) {
				t.Fatalf("errors %q, want %d matching %q", errs, len(tc.errs), tc.errs)
			}
			for i, e := range tc.errs {
				if !strings.Contains(errs[i], e) {
					t.Errorf("error %d = %q, want it to contain %q", i, errs[i], e)
				}
			}
		})
	}
}
