package main

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/bridges/adapters/web/webtest"
)

// TestWebSigninNextE2E (issue 36, attack 5): through the bridge binary, a
// sign-in link whose next is "/%09/evil.example" (a tab browsers drop,
// leaving "//evil.example") or one of its relatives ends on the console's
// own default page, both when signing in and when already signed in; a
// path of the console is kept.
func TestWebSigninNextE2E(t *testing.T) {
	t.Parallel()
	ab := startAgentBridge(t, webBots, "WEB_TOKEN_ANA="+anaWebToken, "WEB_TOKEN_BOB="+bobWebToken)
	base := "http://" + ab.bridge.addr
	newClient := func() *http.Client {
		jar, err := cookiejar.New(nil)
		if err != nil {
			t.Fatal(err)
		}
		c := &http.Client{Jar: jar, Timeout: 30 * time.Second,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		t.Cleanup(c.CloseIdleConnections)
		return c
	}
	var c *http.Client
	get := func(rawQuery string) (int, string, string) {
		t.Helper()
		resp, err := c.Get(base + "/signin?" + rawQuery)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header.Get("Location"), string(b)
	}
	cases := []struct{ rawQuery, want string }{
		{"next=/%09/evil.example", "/"},
		{"next=/%0a/evil.example", "/"},
		{"next=%09//evil.example", "/"},
		{"next=//evil.example", "/"},
		{"next=/%5Cevil.example", "/"},
		{"next=/%252F/evil.example", "/"},
		{"next=https://evil.example/", "/"},
		{"next=/admin/users", "/admin/users"},
	}
	// Signing in: the form carries next, the post redirects to it.
	for _, tc := range cases {
		c = newClient()
		status, _, page := get(tc.rawQuery)
		csrf := webtest.PageCSRF(page)
		if status != http.StatusOK || csrf == "" {
			t.Fatalf("sign-in page for %s: %d", tc.rawQuery, status)
		}
		next, _ := url.ParseQuery(tc.rawQuery)
		resp, err := c.PostForm(base+"/signin", url.Values{"csrf": {csrf}, "token": {bobWebToken}, "next": {next.Get("next")}})
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != tc.want {
			t.Errorf("sign in with %s: %d to %q, want 303 to %q", tc.rawQuery, resp.StatusCode, resp.Header.Get("Location"), tc.want)
		}
	}
	// Signed in: the sign-in page sends on at once.
	for _, tc := range cases {
		status, loc, _ := get(tc.rawQuery)
		if status != http.StatusSeeOther || loc != tc.want || strings.ContainsAny(loc, "\t\n\\") {
			t.Errorf("signed in, /signin?%s: %d to %q, want 303 to %q", tc.rawQuery, status, loc, tc.want)
		}
	}
}
