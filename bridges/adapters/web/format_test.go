package web

import (
	"net/url"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

func TestMarkdownIsSafe(t *testing.T) {
	md := newMarkdown()
	cases := []struct {
		name   string
		in     string
		want   []string // substrings of the HTML
		forbid []string
	}{
		{"script tag", `hi <script>alert(1)</script>`, []string{"hi"}, []string{"<script"}},
		{"event handler", `<img src=x onerror=alert(1)> <b onclick="x()">b</b>`, nil, []string{"<img", "onerror", "onclick", "<b"}},
		{"javascript link", `[x](javascript:alert(1)) [y](JaVaScRiPt:alert(1)) [z](  javascript:alert(1))`, nil, []string{"javascript:", "JaVaScRiPt"}},
		{"raw javascript anchor", `<a href="javascript:alert(1)">x</a>`, nil, []string{"javascript:", "<a"}},
		{"data and vbscript links", `[a](data:text/html,<script>x</script>) [b](vbscript:x)`, nil, []string{"data:", "vbscript:", "<script"}},
		{"iframe and style", `<iframe src="https://e.x"></iframe><style>body{}</style>`, nil, []string{"<iframe", "<style"}},
		{"image from elsewhere", `![t](https://tracker.example/p.png)`, nil, []string{"<img", "tracker.example"}},
		{"https link", `[ok](https://example.com/a?b=1)`, []string{`href="https://example.com/a?b=1"`, `rel="nofollow noreferrer noopener"`, `target="_blank"`}, nil},
		{"autolink", `see https://example.com/x`, []string{`href="https://example.com/x"`, "noopener"}, nil},
		{"code block keeps its language", "```go\nfmt.Println(\"<b>\")\n```", []string{`<pre><code class="language-go">`, "&lt;b&gt;"}, []string{"<b>"}},
		{"code is highlighted, escaped", "```go\nfunc f() { x := \"</code><script>alert(1)</script>\" }\n```",
			[]string{`<span class="kd">func</span>`, `&lt;/code&gt;&lt;script&gt;`}, []string{"<script", "</code><script"}},
		{"diff lines are coloured", "```diff\n- old\n+ new\n```", []string{`<span class="gd">- old`, `<span class="gi">+ new`}, nil},
		{"unknown language stays plain", "```nosuchlang\n<b>x</b>\n```", []string{`<code class="language-nosuchlang">&lt;b&gt;x&lt;/b&gt;`}, []string{"<span"}},
		{"bad language class", "```x\" onclick=\"y\nz\n```", nil, []string{"onclick"}},
		{"table and emphasis", "| a | b |\n|---|---|\n| **c** | ~~d~~ |", []string{"<table>", "<strong>c</strong>", "<del>d</del>"}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := string(md.render(tc.in))
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("output lacks %q:\n%s", w, got)
				}
			}
			for _, f := range tc.forbid {
				if strings.Contains(strings.ToLower(got), strings.ToLower(f)) {
					t.Errorf("output contains %q:\n%s", f, got)
				}
			}
		})
	}
}

// FuzzMarkdownIsSafe: whatever the agent writes, the HTML has only the
// allowed elements and attributes, and links only to http(s) or mailto.
func FuzzMarkdownIsSafe(f *testing.F) {
	for _, s := range []string{`<script>x</script>`, `[a](javascript:x)`, "```\n<img onerror=x>\n```", `<a href="x" onclick="y">`,
		`[a](https://x.example "t")`, "| a |\n|---|\n| <b>x</b> |", "```html\n<span class=\"x\" onclick=y>\n```"} {
		f.Add(s)
	}
	md := newMarkdown()
	allowed := map[string]bool{}
	for _, e := range []string{"p", "br", "hr", "strong", "em", "del", "code", "pre", "blockquote",
		"ul", "ol", "li", "h1", "h2", "h3", "h4", "h5", "h6", "table", "thead", "tbody", "tr", "th", "td", "a", "span"} {
		allowed[e] = true
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := string(md.render(s))
		z := html.NewTokenizer(strings.NewReader(out))
		for {
			tt := z.Next()
			if tt == html.ErrorToken {
				return
			}
			if tt != html.StartTagToken && tt != html.SelfClosingTagToken {
				continue
			}
			tok := z.Token()
			if !allowed[tok.Data] {
				t.Fatalf("element <%s> in output for %q:\n%s", tok.Data, s, out)
			}
			for _, a := range tok.Attr {
				ok := false
				switch a.Key {
				case "href":
					v := strings.ToLower(a.Val)
					ok = tok.Data == "a" && (strings.HasPrefix(v, "http:") || strings.HasPrefix(v, "https:") || strings.HasPrefix(v, "mailto:"))
				case "rel", "target":
					ok = tok.Data == "a"
				case "class":
					ok = tok.Data == "code" && strings.HasPrefix(a.Val, "language-") || tok.Data == "span" && codeClassRE.MatchString(a.Val)
				case "start":
					ok = tok.Data == "ol"
				}
				if !ok {
					t.Fatalf("attribute %s=%q on <%s> for %q:\n%s", a.Key, a.Val, tok.Data, s, out)
				}
			}
		}
	})
}

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
