package web

import (
	"html"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// nextCases are post-sign-in targets with what safeNext must make of them:
// either the target itself (a path on this site) or the default page "/".
var nextCases = []struct {
	next, want string
}{
	// Paths of this site are kept, queries included.
	{"/", "/"},
	{"/chat/abcdefgh12", "/chat/abcdefgh12"},
	{"/chat/abcdefgh12?after=3&q=a%20b", "/chat/abcdefgh12?after=3&q=a%20b"},
	{"/search?q=%2Fx", "/search?q=%2Fx"},
	{"/search?q=//x", "/search?q=//x"},
	{"/%E2%9C%93", "/%E2%9C%93"},
	{"/admin/users", "/admin/users"},
	// The reported attack and its relatives: control characters browsers drop.
	{"/\t/evil.example", "/"},
	{"/\n/evil.example", "/"},
	{"/\r/evil.example", "/"},
	{"/\x00/evil.example", "/"},
	{"/\x0b/evil.example", "/"},
	{"/\x7f/evil.example", "/"},
	{"\t//evil.example", "/"},
	{" //evil.example", "/"},
	{"/ /evil.example", "/"},
	{"/%09/evil.example", "/"}, // one more level of encoding
	{"/%2509/evil.example", "/"},
	{"/%0a/evil.example", "/"},
	// Two slashes, before or after decoding.
	{"//evil.example", "/"},
	{"//evil.example/x", "/"},
	{"///evil.example", "/"},
	{"/%2Fevil.example", "/"},
	{"/%2F/evil.example", "/"},
	{"%2F%2Fevil.example", "/"},
	{"/%252F/evil.example", "/"},
	{"/%25252F/evil.example", "/"},
	// Backslashes, which browsers read as slashes.
	{"/\\evil.example", "/"},
	{"\\\\evil.example", "/"},
	{"/x\\y", "/"},
	{"/%5Cevil.example", "/"},
	{"/%5cevil.example", "/"},
	// Schemes, hosts and things that are no path.
	{"https://evil.example", "/"},
	{"http:evil.example", "/"},
	{"javascript:alert(1)", "/"},
	{"data:text/html,x", "/"},
	{"evil.example", "/"},
	{"./x", "/"},
	{"../x", "/"},
	{"?next=x", "/"},
	{"#x", "/"},
	{"", "/"},
	// Non-ASCII (full-width solidus and friends) and broken escapes.
	{"/\uff0f/evil.example", "/"},
	{"/\u2215evil.example", "/"},
	{"/%EF%BC%8Fevil.example", "/%EF%BC%8Fevil.example"}, // stays one segment in a browser
	{"/%C0%AF/evil.example", "/"},                        // not UTF-8 once decoded
	{"/%zz", "/"},
	{"/" + strings.Repeat("a", maxNextLen), "/"},
}

// TestSafeNext checks the post-sign-in target rule on its own.
func TestSafeNext(t *testing.T) {
	for _, tc := range nextCases {
		if got := safeNext(tc.next); got != tc.want {
			t.Errorf("safeNext(%q) = %q, want %q", tc.next, got, tc.want)
		}
	}
}

// TestSigninNextRedirects sends each target through the three ways a
// console redirects after sign-in — the form's hidden field, the sign-in
// post, and the sign-in page visited while signed in — and checks the
// Location of each: a path of this site or "/".
func TestSigninNextRedirects(t *testing.T) {
	_, srv, _ := newTestConsole(t, testConfig(t, "127.0.0.1:9464", usersYAML), nil)
	in := newClient(t, srv.URL)
	in.signIn(anaToken)
	for _, tc := range nextCases {
		q := "/signin?next=" + url.QueryEscape(tc.next)

		out := newClient(t, srv.URL)
		_, page, _ := out.do("GET", q, nil, nil)
		if field := `name="next" value="` + html.EscapeString(tc.want) + `"`; !strings.Contains(strings.ReplaceAll(page, "&#43;", "+"), field) && !strings.Contains(page, `name="next" value="`+templateEscaped(tc.want)+`"`) {
			t.Errorf("sign-in form for next=%q: no %s", tc.next, field)
		}
		s, _, resp := out.do("POST", "/signin", url.Values{"csrf": {csrfIn(t, page)}, "token": {bobToken}, "next": {tc.next}}, nil)
		if s != http.StatusSeeOther || resp.Header.Get("Location") != tc.want {
			t.Errorf("sign in with next=%q: %d to %q, want 303 to %q", tc.next, s, resp.Header.Get("Location"), tc.want)
		}

		s, _, resp = in.do("GET", q, nil, nil)
		if s != http.StatusSeeOther || resp.Header.Get("Location") != tc.want {
			t.Errorf("signed in, GET %s: %d to %q, want 303 to %q", q, s, resp.Header.Get("Location"), tc.want)
		}
	}
}

// templateEscaped is s as html/template writes it into an attribute.
func templateEscaped(s string) string {
	return strings.NewReplacer("&", "&amp;", "+", "&#43;", `"`, "&#34;", "'", "&#39;", "<", "&lt;", ">", "&gt;").Replace(s)
}
