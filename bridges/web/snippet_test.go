package web

import "testing"

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
