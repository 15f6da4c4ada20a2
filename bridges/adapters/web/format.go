package web

import (
	"bytes"
	"fmt"
	"html/template"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/alecthomas/chroma/v2"
	chromahtml "github.com/alecthomas/chroma/v2/formatters/html"
	"github.com/alecthomas/chroma/v2/lexers"
	"github.com/alecthomas/chroma/v2/styles"
	"github.com/microcosm-cc/bluemonday"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
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
//     <span> that the highlighter made).
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
	text = markToolLinks(text)
	var buf bytes.Buffer
	if err := m.md.Convert([]byte(text), &buf); err != nil {
		return template.HTML("<p>" + template.HTMLEscapeString(text) + "</p>")
	}
	return template.HTML(iconEmoji(toolButtons(m.policy.Sanitize(buf.String())))) //nolint:gosec // sanitised just now; the buttons carry checked ids, the icons known names
}

// Code highlighting happens on the server, in Go: a fenced code block
// with a language chroma knows becomes <pre><code class="language-x">
// with one <span class="TOKEN"> per token, each token's text escaped by
// chroma's formatter (and the result sanitised like all agent output).
// Colours come from classes only (the Content-Security-Policy allows no
// style attributes), defined in codeCSS for the light and the dark theme.

// codeClassRE matches the class attribute chroma gives a token span.
var codeClassRE = regexp.MustCompile(`^[a-z][a-z0-9]{0,5}$`)

// highlighter renders fenced code blocks with chroma; other blocks keep
// goldmark's rendering.
type highlighter struct {
	formatter *chromahtml.Formatter
	style     *chroma.Style
}

func newHighlighter() *highlighter {
	return &highlighter{
		formatter: chromahtml.New(chromahtml.WithClasses(true), chromahtml.PreventSurroundingPre(true)),
		style:     styles.Get("github"),
	}
}

// RegisterFuncs implements renderer.NodeRenderer.
func (h *highlighter) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	reg.Register(ast.KindFencedCodeBlock, h.renderFenced)
}

func (h *highlighter) renderFenced(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkContinue, nil
	}
	n := node.(*ast.FencedCodeBlock)
	var code bytes.Buffer
	for i := 0; i < n.Lines().Len(); i++ {
		seg := n.Lines().At(i)
		code.Write(seg.Value(source))
	}
	lang := string(n.Language(source))
	_, _ = w.WriteString("<pre><code")
	if lang != "" {
		_, _ = w.WriteString(` class="language-`)
		_, _ = w.Write(util.EscapeHTML([]byte(lang)))
		_, _ = w.WriteString(`"`)
	}
	_, _ = w.WriteString(">")
	lexer := lexers.Get(lang)
	if lang == "" || lexer == nil {
		_, _ = w.Write(util.EscapeHTML(code.Bytes()))
	} else if it, err := chroma.Coalesce(lexer).Tokenise(nil, code.String()); err != nil {
		_, _ = w.Write(util.EscapeHTML(code.Bytes()))
	} else if err := h.formatter.Format(w, h.style, it); err != nil {
		return ast.WalkStop, fmt.Errorf("highlight %s code: %w", lang, err)
	}
	_, _ = w.WriteString("</code></pre>\n")
	return ast.WalkSkipChildren, nil
}

// codeCSS is the stylesheet of highlighted code: the light style, and the
// dark one for the dark theme (chosen, or followed from the system).
func codeCSS() ([]byte, error) {
	var light, dark bytes.Buffer
	f := chromahtml.New(chromahtml.WithClasses(true))
	if err := f.WriteCSS(&light, styles.Get("github")); err != nil {
		return nil, fmt.Errorf("code style: %w", err)
	}
	if err := f.WriteCSS(&dark, styles.Get("github-dark")); err != nil {
		return nil, fmt.Errorf("dark code style: %w", err)
	}
	lightRules, darkRules := tokenRules(light.String()), tokenRules(dark.String())
	// A token the dark style leaves alone must not keep its light colour.
	for cls := range lightRules {
		if _, ok := darkRules[cls]; !ok {
			darkRules[cls] = " color: inherit; background-color: transparent; font-weight: inherit; font-style: inherit }"
		}
	}
	var out bytes.Buffer
	out.WriteString("/* Generated by bridges/adapters/web/format.go from chroma's github and github-dark styles. */\n")
	writeRules(&out, lightRules, ".md pre")
	writeRules(&out, darkRules, ":root[data-theme=dark] .md pre")
	out.WriteString("@media (prefers-color-scheme: dark) {\n")
	writeRules(&out, darkRules, ":root:not([data-theme=light]) .md pre")
	out.WriteString("}\n")
	return out.Bytes(), nil
}

// writeRules writes rules (class → "declarations }") scoped under scope, in
// class order.
func writeRules(out *bytes.Buffer, rules map[string]string, scope string) {
	for _, cls := range slices.Sorted(maps.Keys(rules)) {
		fmt.Fprintf(out, "%s .%s {%s\n", scope, cls, rules[cls])
	}
}

// layoutClasses are chroma's classes for lines and line numbers, which the
// console does not use.
var layoutClasses = map[string]bool{"line": true, "cl": true, "ln": true, "lnt": true, "lntd": true, "lntable": true, "hl": true}

// tokenRules reads the token rules of chroma's CSS (".chroma .k { … }")
// into class → "declarations }"; the background, line and pre-wrapper
// rules are left to the console's own stylesheet.
func tokenRules(css string) map[string]string {
	rules := make(map[string]string)
	for _, line := range strings.Split(css, "\n") {
		line = strings.TrimSpace(line)
		sel, rule, ok := strings.Cut(line, "{")
		if !ok {
			continue
		}
		if i := strings.Index(sel, "*/"); i >= 0 { // a comment naming the token type
			sel = sel[i+2:]
		}
		cls, ok := strings.CutPrefix(strings.TrimSpace(sel), ".chroma .")
		if !ok || !codeClassRE.MatchString(cls) || layoutClasses[cls] {
			continue
		}
		rules[cls] = rule
	}
	return rules
}
