package web

import (
	"io/fs"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentbridge/agentbridge/bridges/adapters/web/admin"
)

// iconRanges are the code points that draw as pictures (emoji and symbol
// icons): without an emoji or symbol font they are empty boxes.
var iconRanges = [][2]rune{
	{0x2190, 0x21FF},   // arrows
	{0x2300, 0x23FF},   // miscellaneous technical (⌘, ⏳, ⏹)
	{0x2460, 0x24FF},   // enclosed alphanumerics
	{0x25A0, 0x25FF},   // geometric shapes (▶, ●)
	{0x2600, 0x27BF},   // miscellaneous symbols, dingbats (☰, ⚠, ✓, ✕)
	{0x2900, 0x297F},   // supplemental arrows
	{0x2B00, 0x2BFF},   // miscellaneous symbols and arrows (⭐)
	{0x3030, 0x3030},   // wavy dash
	{0x303D, 0x303D},   // part alternation mark
	{0x3297, 0x3299},   // circled ideographs
	{0xFE0E, 0xFE0F},   // text / emoji presentation selectors
	{0x200D, 0x200D},   // zero-width joiner (emoji sequences)
	{0x20E3, 0x20E3},   // combining keycap
	{0x1F000, 0x1FAFF}, // emoji and pictographs
}

func isIconRune(r rune) bool {
	for _, rg := range iconRanges {
		if r >= rg[0] && r <= rg[1] {
			return true
		}
	}
	return false
}

// TestNoEmojiInConsole: the console's served files (pages, operator pages,
// scripts, styles) hold no emoji or symbol-font icon: its icons are inline
// SVG, hidden from screen readers (the control or text beside each says
// what it is).
func TestNoEmojiInConsole(t *testing.T) {
	svg := regexp.MustCompile(`<svg\b[^>]*>`)
	n := 0
	for name, fsys := range map[string]fs.FS{"templates": templatesFS, "static": staticFS, "admin": admin.Templates()} {
		err := fs.WalkDir(fsys, ".", func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := fs.ReadFile(fsys, path)
			if err != nil {
				return err
			}
			n++
			if !utf8.Valid(b) {
				t.Errorf("%s/%s: not UTF-8", name, path)
				return nil
			}
			for i, line := range strings.Split(string(b), "\n") {
				for _, r := range line {
					if isIconRune(r) {
						t.Errorf("%s/%s:%d: %q (U+%04X) draws as an emoji or symbol-font icon: use an SVG icon (partials/icons.html)", name, path, i+1, r, r)
					}
				}
			}
			for _, tag := range svg.FindAllString(string(b), -1) {
				if !strings.Contains(tag, `aria-hidden="true"`) {
					t.Errorf("%s/%s: %s is not hidden from screen readers", name, path, tag)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if n < 10 {
		t.Fatalf("scanned %d files: the embedded files were not found", n)
	}
}

// TestIconsRender: every icon a page names is drawn (an unknown name
// would render an empty svg).
func TestIconsRender(t *testing.T) {
	pages, err := parsePages()
	if err != nil {
		t.Fatal(err)
	}
	used := regexp.MustCompile(`\{\{template "icon" "([a-z-]+)"\}\}`)
	names := map[string]bool{}
	for name, fsys := range map[string]fs.FS{"templates": templatesFS, "admin": admin.Templates()} {
		err := fs.WalkDir(fsys, ".", func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := fs.ReadFile(fsys, path)
			for _, m := range used.FindAllStringSubmatch(string(b), -1) {
				names[m[1]] = true
			}
			return err
		})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	if len(names) < 5 {
		t.Fatalf("found %d icon names in the templates", len(names))
	}
	for icon := range names {
		var b strings.Builder
		if err := pages["chat"].ExecuteTemplate(&b, "icon", icon); err != nil {
			t.Fatalf("icon %q: %v", icon, err)
		}
		if !strings.Contains(b.String(), "<path") && !strings.Contains(b.String(), "<rect") && !strings.Contains(b.String(), "<circle") {
			t.Errorf("icon %q draws nothing: %s", icon, b.String())
		}
	}
}

// TestEmojiIcons: the bridge's own emoji in an agent message become icons
// (the emoji kept as hidden text, one emoji presentation selector with
// it), not inside code or tags, and others stay; each icon is served.
func TestEmojiIcons(t *testing.T) {
	for in, want := range map[string]string{
		"<p>⚠️ Stop</p>": `<p><span class="emoji" data-icon="warning"><span class="visually-hidden">⚠️</span></span> Stop</p>`,
		"<p>🔐 <strong>Bash</strong> ✅</p>": `<p><span class="emoji" data-icon="lock"><span class="visually-hidden">🔐</span></span> <strong>Bash</strong> ` +
			`<span class="emoji" data-icon="check"><span class="visually-hidden">✅</span></span></p>`,
		"<pre><code>⚠️ in code</code></pre><p>🙂</p>": "<pre><code>⚠️ in code</code></pre><p>🙂</p>",
		`<a href="https://x.example/⚠">x</a>`:        `<a href="https://x.example/⚠">x</a>`,
		"<p>no emoji</p>":                            "<p>no emoji</p>",
	} {
		if got := iconEmoji(in); got != want {
			t.Errorf("iconEmoji(%q) =\n%s\nwant\n%s", in, got, want)
		}
	}
	c, srv, _ := newTestConsole(t, testConfig(t, "127.0.0.1:9464", usersYAML), nil)
	if got := c.md.render("⛔ **No**"); !strings.Contains(string(got), `data-icon="blocked"`) {
		t.Errorf("an agent message's ⛔ is not drawn as an icon: %s", got)
	}
	cl := newClient(t, srv.URL)
	for _, name := range emojiIcons {
		status, body, resp := cl.do("GET", "/static/icons/"+name+".svg", nil, nil)
		if status != 200 || resp.Header.Get("Content-Type") != "image/svg+xml" || !strings.Contains(body, `xmlns="http://www.w3.org/2000/svg"`) || !strings.Contains(body, "<path") && !strings.Contains(body, "<rect") {
			t.Errorf("icon %s: %d %s %s", name, status, resp.Header.Get("Content-Type"), body)
		}
	}
	if status, _, _ := cl.do("GET", "/static/icons/nope.svg", nil, nil); status != 404 {
		t.Errorf("an unknown icon: %d, want 404", status)
	}
}
