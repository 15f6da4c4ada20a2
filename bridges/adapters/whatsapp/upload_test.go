package whatsapp

import (
	"errors"
	"testing"

	"go.mau.fi/whatsmeow"

	"github.com/agentbridge/agentbridge/bridges"
)

// Issue 24, finding 8: the agent's send_file reaches WhatsApp as a file:
// an image inline with its caption, anything else as a document with its
// name and MIME type. A chat that never wrote to the bot gets nothing.
// Before, WhatsApp had no FileUploader and files came as text snippets.
func TestUploadFile(t *testing.T) {
	e, key := startOwned(t)
	png := append([]byte("\x89PNG\r\n\x1a\n"), make([]byte, 32)...)
	ref, err := e.b.UploadFile(t.Context(), key, bridges.Upload{Name: "plots/chart.png", Data: png, Comment: "**The** chart"})
	if err != nil || ref.ID == "" {
		t.Fatalf("upload of an image: %v, %+v", err, ref)
	}
	if _, err := e.b.UploadFile(t.Context(), key, bridges.Upload{Name: "report.pdf", Data: []byte("%PDF-1.7 fake")}); err != nil {
		t.Fatalf("upload of a document: %v", err)
	}
	var uploads []string
	var sent []fakeCall
	for _, c := range e.fake.Calls() {
		switch {
		case c.Op == "Upload":
			uploads = append(uploads, c.State)
		case c.Op == "SendMessage" && (c.Message.GetImageMessage() != nil || c.Message.GetDocumentMessage() != nil):
			sent = append(sent, c)
		}
	}
	if len(uploads) != 2 || uploads[0] != string(whatsmeow.MediaImage) || uploads[1] != string(whatsmeow.MediaDocument) {
		t.Errorf("uploads %q, want an image then a document", uploads)
	}
	if len(sent) != 2 {
		t.Fatalf("sent %d file messages, want 2:\n%s", len(sent), dumpCalls(e.fake.Calls()))
	}
	img := sent[0].Message.GetImageMessage()
	if img.GetMimetype() != "image/png" || img.GetCaption() != "*The* chart" || img.GetFileLength() != uint64(len(png)) || img.GetDirectPath() == "" || len(img.GetMediaKey()) != 32 {
		t.Errorf("image message %v", img)
	}
	doc := sent[1].Message.GetDocumentMessage()
	if doc.GetMimetype() != "application/pdf" || doc.GetFileName() != "report.pdf" || doc.GetCaption() != "" {
		t.Errorf("document message %v", doc)
	}
	stranger := bridges.ConversationKey{Bot: "phone", Channel: pnJID(stranger).String()}
	if _, err := e.b.UploadFile(t.Context(), stranger, bridges.Upload{Name: "x.txt", Data: []byte("x")}); !errors.Is(err, ErrNotAllowed) || !bridges.IsPermanent(err) {
		t.Errorf("upload to a chat that never wrote: %v, want a permanent ErrNotAllowed", err)
	}
}
