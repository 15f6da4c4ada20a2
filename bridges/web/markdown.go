package web

import (
	"bytes"
	"html/template"
	"net/url"
	"regexp"

	"github.com/microcosm-cc/bluemonday"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/renderer"
	gmhtml "github.com/yuin/goldmark/renderer/html"
	"github.com/yuin/goldmark/util"
)

// markdown turns the agent's CommonMark into HTML that is safe to show.
// The agent is not trusted (its text may carry a prompt injection), so the
// output goes through two independent filters:
//
//   - goldmark without WithUnsafe: raw HTML in the text is dropped and
//     dangerous link destinations (javascript:, vbscript:, data: other
//     than images) are emptied;
//   - a bluemonday allow-list of the elements markdown produces, links
//     limited to http, https and mailto and given rel="nofollow noreferrer
//     noopener" and target="_blank"; http and https only with a host
//     (a browser reads "https:x" or "http:/x" as relative); no images
//     (they would load from anywhere), no attributes beyond href, a
//     code block's language and the class of a highlighted token (a
//     <span> that highlight.go made).
//
// The Content-Security-Policy (no inline script, nothing from other
// origins) is the third layer.
type markdown struct {
	md     goldmark.Markdown
	policy *bluemonday.Policy
}

func newMarkdown() *markdown {
	p := bluemonday.NewPolicy()
	p.AllowElements("p", "br", "hr", "strong", "em", "del", "code", "pre", "blockquote",
		"ul", "ol", "li", "h1", "h2", "h3", "h4", "h5", "h6", "table", "thead", "tbody", "tr", "th", "td", "a")
	p.AllowAttrs("href").OnElements("a")
	p.AllowURLSchemes("mailto")
	// http(s) only with a host: a browser reads "https:evil.example" or
	// "http:/admin" as a relative reference (a link into the console).
	for _, scheme := range []string{"http", "https"} {
		p.AllowURLSchemeWithCustomPolicy(scheme, func(u *url.URL) bool { return u.Host != "" && u.Opaque == "" })
	}
	p.RequireParseableURLs(true)
	p.AllowRelativeURLs(false)
	p.RequireNoFollowOnLinks(true)
	p.RequireNoReferrerOnLinks(true)
	p.AddTargetBlankToFullyQualifiedLinks(true) // also adds rel="noopener"
	p.AllowAttrs("class").Matching(regexp.MustCompile(`^language-[A-Za-z0-9_+#.-]{1,32}$`)).OnElements("code")
	p.AllowAttrs("start").Matching(bluemonday.Integer).OnElements("ol")
	p.AllowElements("span")
	p.AllowAttrs("class").Matching(codeClassRE).OnElements("span")
	return &markdown{
		md: goldmark.New(
			goldmark.WithExtensions(extension.Table, extension.Strikethrough, extension.Linkify),
			goldmark.WithRendererOptions(gmhtml.WithHardWraps(),
				renderer.WithNodeRenderers(util.Prioritized(newHighlighter(), 100))),
		),
		policy: p,
	}
}

// render returns text as sanitised HTML. Text that does not convert is
// shown escaped.
func (m *markdown) render(text string) template.HTML {
	var buf bytes.Buffer
	if err := m.md.Convert([]byte(text), &buf); err != nil {
		return template.HTML("<p>" + template.HTMLEscapeString(text) + "</p>")
	}
	return template.HTML(m.policy.SanitizeBytes(buf.Bytes())) //nolint:gosec // sanitised just now
}
