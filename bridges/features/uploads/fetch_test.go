package uploads_test

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"strings"
	"testing"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/features/uploads"
	"github.com/agentbridge/agentbridge/bridges/kits/bridgetest"
)

// host is a conversation for Fetch: a fake platform that serves files,
// an uploads directory, an optional transcriber, and the notices told.
type host struct {
	plat    bridges.Platform
	dir     string
	tr      uploads.Transcriber
	notices []string
}

func (h *host) Log() *slog.Logger                     { return slog.New(slog.DiscardHandler) }
func (h *host) Platform() bridges.Platform            { return h.plat }
func (h *host) Notice(_ context.Context, text string) { h.notices = append(h.notices, text) }
func (h *host) Dir() string                           { return h.dir }
func (h *host) Transcriber() uploads.Transcriber      { return h.tr }

func (f transcriber) Transcribe(context.Context, []byte, string, string) (string, error) {
	return f.text, f.err
}

// postOnly is a platform that cannot fetch files.
type postOnly struct{}

func (postOnly) Limits() bridges.Limits                     { return bridges.Limits{} }
func (postOnly) Run(context.Context, bridges.Handler) error { return nil }
func (postOnly) Post(context.Context, bridges.ConversationKey, bridges.Message) (bridges.MessageRef, error) {
	return bridges.MessageRef{}, nil
}

type transcriber struct {
	text string
	err  error
}

// TestFetch: an image goes to the agent as an image block, a document is
// saved in the uploads directory and named by path, a file over its cap is
// not downloaded (the conversation is told, the agent gets a note), and
// without a FileFetcher nothing is forwarded.
func TestFetch(t *testing.T) {
	ctx := context.Background()
	plat := bridgetest.New(bridges.Limits{})
	plat.AddFile("img", []byte("\x89PNG"))
	plat.AddFile("doc", []byte("a,b\n1,2\n"))
	h := &host{plat: plat, dir: t.TempDir()}
	files := []bridges.File{
		{ID: "img", Name: "shot.png", MimeType: "image/png", Size: 4},
		{ID: "doc", Name: "data.csv", MimeType: "text/csv", Size: 8},
		{ID: "big", Name: "huge.bin", MimeType: "application/octet-stream", Size: uploads.MaxDocumentBytes + 1},
	}
	imgs, notes := uploads.Fetch(ctx, h, "m1", files)
	if len(imgs) != 1 || imgs[0].MediaType != "image/png" || string(imgs[0].Data) != "\x89PNG" {
		t.Errorf("images = %+v, want the PNG", imgs)
	}
	if len(notes) != 2 || !strings.HasPrefix(notes[0], "[attached file saved for you at "+h.dir) ||
		!strings.Contains(notes[1], "[attachment not forwarded: huge.bin is larger than") {
		t.Fatalf("notes = %q", notes)
	}
	path := strings.Fields(notes[0])[6]
	if b, err := os.ReadFile(path); err != nil || string(b) != "a,b\n1,2\n" {
		t.Errorf("saved %s: %q, %v", path, b, err)
	}
	if len(h.notices) != 1 || !strings.Contains(h.notices[0], "huge.bin") {
		t.Errorf("notices = %q, want one about the large file", h.notices)
	}
	_, notes = uploads.Fetch(ctx, &host{plat: postOnly{}, dir: h.dir}, "m2", files[:1])
	if len(notes) != 1 || !strings.HasPrefix(notes[0], "[attachment not forwarded: shot.png") {
		t.Errorf("without a FileFetcher: notes = %q", notes)
	}
}

// TestVoiceNotes: a message of nothing but audio is refused with a notice
// when no transcription is set up (never an empty message to the agent);
// with one, the note's transcript goes to the agent and is shown; a
// failed transcription tells the conversation and leaves the agent the
// saved audio.
func TestVoiceNotes(t *testing.T) {
	ctx := context.Background()
	voice := bridges.File{ID: "v", Name: "note.ogg", MimeType: "audio/ogg", Size: 3, Voice: true}
	plat := bridgetest.New(bridges.Limits{})
	plat.AddFile("v", []byte("ogg"))

	off := &host{plat: plat, dir: t.TempDir()}
	if !uploads.RefuseVoiceOff(ctx, off, "m1", "", "", []bridges.File{voice}) || len(off.notices) != 1 {
		t.Errorf("voice only, no transcription: not refused (notices %q)", off.notices)
	}
	if uploads.RefuseVoiceOff(ctx, off, "m2", "see this", "", []bridges.File{voice}) {
		t.Error("voice beside text refused")
	}

	on := &host{plat: plat, dir: t.TempDir(), tr: transcriber{text: "deploy the fix"}}
	if uploads.RefuseVoiceOff(ctx, on, "m3", "", "", []bridges.File{voice}) {
		t.Error("voice refused although transcription is set up")
	}
	_, notes := uploads.Fetch(ctx, on, "m3", []bridges.File{voice})
	if len(notes) != 1 || !strings.Contains(notes[0], "transcribed by speech-to-text") || !strings.Contains(notes[0], "deploy the fix") ||
		!strings.Contains(notes[0], "[the audio is saved for you at "+on.dir) {
		t.Errorf("notes = %q", notes)
	}
	if len(on.notices) != 1 || !strings.HasSuffix(on.notices[0], "deploy the fix") {
		t.Errorf("notices = %q, want the transcript shown", on.notices)
	}

	failing := &host{plat: plat, dir: t.TempDir(), tr: transcriber{err: errors.New("503")}}
	_, notes = uploads.Fetch(ctx, failing, "m4", []bridges.File{voice})
	if len(notes) != 1 || !strings.HasPrefix(notes[0], "[a voice note that could not be transcribed]") || len(failing.notices) != 1 {
		t.Errorf("failed transcription: notes %q, notices %q", notes, failing.notices)
	}
}
