package webtest

import (
	"strings"
	"testing"
)

func TestPageHelpers(t *testing.T) {
	page := `<form><input type="hidden" name="csrf" value="a&amp;b"></form>`
	if got := PageCSRF(page); got != "a&b" {
		t.Errorf("PageCSRF = %q, want a&b", got)
	}
	if got := PageCSRF("<p>none</p>"); got != "" {
		t.Errorf("PageCSRF of a page without a form = %q, want empty", got)
	}
	if got := PageText("<p>Tom &amp;\n  <b>Jerry</b></p>"); got != "Tom & Jerry" {
		t.Errorf("PageText = %q, want %q", got, "Tom & Jerry")
	}
	card := Event{HTML: `<input name="card" value="c1"><button name="choice" value="ok">✅ Allow</button><button name="choice" value="no">Deny</button>`}
	if c, choice := CardChoice(t, card, "Allow"); c != "c1" || choice != "ok" {
		t.Errorf("CardChoice(Allow) = %q %q, want c1 ok", c, choice)
	}
}

func TestReadSSE(t *testing.T) {
	in := "event: msg\ndata: one\n\ndata: unnamed\n\nevent: typing\ndata: {\"On\":true}\n\n"
	var got []string
	if err := ReadSSE(strings.NewReader(in), func(name, data string) { got = append(got, name+"="+data) }); err != nil {
		t.Fatal(err)
	}
	want := []string{"msg=one", "=unnamed", `typing={"On":true}`}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("ReadSSE saw %q, want %q", got, want)
	}
}
