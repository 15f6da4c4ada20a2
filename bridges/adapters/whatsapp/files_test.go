package whatsapp

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.mau.fi/whatsmeow/proto/waE2E"
	"google.golang.org/protobuf/proto"
)

// A document within the size cap is downloaded and saved for the agent,
// which gets its path; one over the cap is refused with a clear reply in
// the chat and never downloaded.
func TestDocuments(t *testing.T) {
	e := startWith(t, nil)
	e.fake.mu.Lock()
	e.fake.files["/doc/1"] = []byte("quarterly numbers")
	e.fake.mu.Unlock()
	doc := e.msg(pnJID(alice), pnJID(alice), "")
	doc.Message = &waE2E.Message{DocumentMessage: &waE2E.DocumentMessage{Caption: proto.String("summarise this"),
		FileName: proto.String("report.txt"), Mimetype: proto.String("text/plain"), DirectPath: proto.String("/doc/1"), FileLength: proto.Uint64(17)}}
	e.dispatch(doc)
	e.waitText(pnJID(alice), "summarise this")
	texts := e.agentTexts()
	m := regexp.MustCompile(`\[attached file saved for you at (\S+) \(text/plain, 17 B\)\]`).FindStringSubmatch(strings.Join(texts, "\n"))
	if len(texts) != 1 || !strings.HasPrefix(texts[0], "summarise this") || m == nil {
		t.Fatalf("agent got %q", texts)
	}
	if data, err := os.ReadFile(m[1]); err != nil || string(data) != "quarterly numbers" {
		t.Errorf("saved document %s = %q, %v", m[1], data, err)
	}

	huge := e.msg(pnJID(alice), pnJID(alice), "")
	huge.Message = &waE2E.Message{DocumentMessage: &waE2E.DocumentMessage{Caption: proto.String("and this"),
		FileName: proto.String("dump.zip"), Mimetype: proto.String("application/zip"), DirectPath: proto.String("/doc/2"), FileLength: proto.Uint64(25 << 20)}}
	e.dispatch(huge)
	e.waitText(pnJID(alice), "`dump.zip` is too large (25.0 MB): files up to 20.0 MB reach the agent.")
	e.waitText(pnJID(alice), "and this")
	var downloads []string
	for _, c := range e.fake.Calls() {
		if c.Op == "Download" {
			downloads = append(downloads, c.Media.GetDirectPath())
		}
	}
	if !slices.Equal(downloads, []string{"/doc/1"}) {
		t.Errorf("downloads %q, want only the document within the cap", downloads)
	}
	if texts := e.agentTexts(); len(texts) != 2 || !strings.Contains(texts[1], "[attachment not forwarded: dump.zip is larger than 20.0 MB]") {
		t.Errorf("agent got %q", texts)
	}
}
