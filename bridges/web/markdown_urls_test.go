package web

import (
	"net/url"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// dangerousURLs are link targets an agent (or a prompt injection in its
// text) may write that must never reach the console as a link: other
// schemes, obfuscated schemes, and relative or protocol-relative targets
// (which would point into the console itself or to a host the reader
// does not see).
var dangerousURLs = []string{
	"javascript:alert(1)", "JaVaScRiPt:alert(1)", " javascript:alert(1)", "javascript&#58;alert(1)",
	"&#106;avascript:alert(1)", "&#x6A;avascript:alert(1)", "java\tscript:alert(1)", "java&#x09;script:alert(1)",
	"java&#10;script:alert(1)", "javascript%3Aalert(1)", "\x01javascript:alert(1)",
	"vbscript:msgbox(1)", "VBScript:msgbox(1)", "livescript:x",
	"data:text/html,<script>alert(1)</script>", "data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==",
	"data:image/png;base64,iVBORw0KGgo=", "DATA:text/html,x",
	"file:///etc/passwd", "FILE:///etc/passwd", "file://host/share", "ftp://evil.example/x", "FTP://evil.example/x",
	"sftp://evil.example/x", "smb://evil.example/x", "blob:https://evil.example/x", "filesystem:https://x/y",
	"tel:+15551234567", "sms:+15551234567", "intent://x#Intent;end", "view-source:https://x.example",
	"//evil.example/x", "///evil.example/x", "\\\\evil.example/x", "/\\evil.example/x", "\\/evil.example/x",
	"/admin/users", "../admin", "./x", "admin/users", "?next=x", "#frag", "api/sessions/delete",
	"https:evil.example", "http:/evil.example",
}

// renderings are the ways markdown makes a link or an image of u.
var renderings = []func(u string) string{
	func(u string) string { return "[x](" + u + ")" },
	func(u string) string { return "[x](<" + u + ">)" },
	func(u string) string { return "[x][r]\n\n[r]: " + u },
	func(u string) string { return "![x](" + u + ")" },
	func(u string) string { return "<" + u + ">" },
	func(u string) string { return "see " + u + " now" },
	func(u string) string { return `<a href="` + u + `">x</a>` },
	func(u string) string { return `<img src="` + u + `">` },
}

// Property: for every dangerous target in every markdown form, the
// console's HTML carries no href or src other than an absolute http(s)
// URL with a host or a mailto: address. A safe link in the same text
// still comes through, so the check is not vacuous.
func TestMarkdownRefusesDangerousURLs(t *testing.T) {
	md := newMarkdown()
	for _, u := range dangerousURLs {
		for i, form := range renderings {
			in := "[ok](https://ok.example/)\n\n" + form(u)
			out := string(md.render(in))
			hrefs := links(t, out)
			okSeen := false
			for _, h := range hrefs {
				if h == "https://ok.example/" {
					okSeen = true
					continue
				}
				if !safeHref(h) {
					t.Errorf("form %d of %q: link %q survived:\n%s", i, u, h, out)
				}
			}
			if !okSeen {
				t.Errorf("form %d of %q: the safe link was lost:\n%s", i, u, out)
			}
		}
	}
}

// links returns every href and src in out (entities decoded).
func links(t *testing.T, out string) []string {
	t.Helper()
	var got []string
	z := html.NewTokenizer(strings.NewReader(out))
	for {
		switch z.Next() {
		case html.ErrorToken:
			return got
		case html.StartTagToken, html.SelfClosingTagToken:
			for _, a := range z.Token().Attr {
				if a.Key == "href" || a.Key == "src" {
					got = append(got, a.Val)
				}
			}
		}
	}
}

// safeHref: an absolute http(s) URL with a host and no backslash, or mailto.
func safeHref(h string) bool {
	u, err := url.Parse(h)
	if err != nil || strings.ContainsAny(h, "\\\t\n\r") {
		return false
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
		return u.Host != "" && u.Opaque == ""
	case "mailto":
		return u.Opaque != ""
	}
	return false
}
