package whatsapp

import (
	"slices"
	"strings"
	"testing"

	"go.mau.fi/whatsmeow/proto/waE2E"
	"google.golang.org/protobuf/proto"
)

// Issue 24, finding 7: "@bot summarise this" quoting a colleague's message
// gives the agent the quoted text, marked as quoted; quoting an image gives
// it the image too. Before, the agent got "summarise this" alone.
func TestQuotedContextToAgent(t *testing.T) {
	e := startWith(t, nil)
	mention := func(ci *waE2E.ContextInfo) *waE2E.ContextInfo {
		ci.MentionedJID = []string{botPhone + "@s.whatsapp.net"}
		return ci
	}
	e.dispatch(extended(e.msg(group, pnJID(alice), "@"+botPhone+" summarise this"), mention(&waE2E.ContextInfo{
		StanzaID: proto.String("BOBMSG1"), Participant: proto.String(pnJID(bob).String()),
		QuotedMessage: &waE2E.Message{Conversation: proto.String("the build is red since Monday\nsee CI")}})))
	e.waitText(group, "summarise this")
	if got := e.agentTexts(); len(got) != 1 || got[0] != "[Replying to this message]\n> the build is red since Monday\n> see CI\n\nsummarise this" {
		t.Errorf("agent got %q", got)
	}

	e.fake.mu.Lock()
	e.fake.files["/img/q"] = []byte("\x89PNG quoted")
	e.fake.mu.Unlock()
	e.dispatch(extended(e.msg(group, pnJID(alice), "@"+botPhone+" what is in it"), mention(&waE2E.ContextInfo{
		StanzaID: proto.String("BOBIMG1"), Participant: proto.String(pnJID(bob).String()),
		QuotedMessage: &waE2E.Message{ImageMessage: &waE2E.ImageMessage{Caption: proto.String("screenshot"), Mimetype: proto.String("image/png"),
			DirectPath: proto.String("/img/q"), FileLength: proto.Uint64(12)}}})))
	e.waitText(group, "what is in it")
	if !slices.ContainsFunc(e.fake.Calls(), op("Download")) {
		t.Errorf("the quoted image was not downloaded:\n%s", dumpCalls(e.fake.Calls()))
	}
	var images int
	var last string
	for _, s := range e.core.Pool.Sessions() {
		for _, m := range s.Sent() {
			images += len(m.Images)
			last = m.Text
		}
	}
	if images != 1 || !strings.Contains(last, "> [image.png, attached as quoted-image.png]") || !strings.Contains(last, "> screenshot") {
		t.Errorf("agent got %d images and %q", images, last)
	}
}
