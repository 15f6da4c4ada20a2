package whatsapp

import (
	"bytes"
	"os"
	"regexp"
	"strings"
	"testing"

	"go.mau.fi/whatsmeow/proto/waE2E"
	"google.golang.org/protobuf/proto"

	"github.com/agentbridge/agentbridge/agent/fakemodel"
	"github.com/agentbridge/agentbridge/bridges/features/transcribe"
	"github.com/agentbridge/agentbridge/bridges/features/transcribe/transcribetest"
)

// Issue 26, item 2: a WhatsApp voice note (push-to-talk, Ogg Opus) is
// downloaded through the client seam, transcribed by the configured
// endpoint (a fake that checks the multipart body), shown under the note,
// and reaches the real CLI's model as text marked as a voice note with
// the saved audio's path.
func TestLiveVoiceNoteReachesTheModel(t *testing.T) {
	stt := transcribetest.NewServer(t, "sk-test", "please deploy the staging branch")
	tr, err := transcribe.New(transcribe.Options{URL: stt.URL, Model: "whisper-1", APIKey: "sk-test"})
	if err != nil {
		t.Fatal(err)
	}
	l := startClaudeEnvWith(t, tr)
	dm := pnJID(alice)
	audio := transcribetest.OggOpus()
	l.fake.mu.Lock()
	l.fake.files["/voice/live"] = audio
	l.fake.mu.Unlock()
	note := l.msg(dm, pnJID(alice), "")
	note.Message = &waE2E.Message{AudioMessage: &waE2E.AudioMessage{PTT: proto.Bool(true), Mimetype: proto.String("audio/ogg; codecs=opus"),
		DirectPath: proto.String("/voice/live"), FileLength: proto.Uint64(uint64(len(audio))), Seconds: proto.Uint32(3)}}
	l.dispatch(note)

	l.waitTextWithin(liveTimeout, dm, "_transcript_: please deploy the staging branch")
	l.waitTextWithin(liveTimeout, dm, "pong:")
	if !l.modelSaw("[voice note, transcribed by speech-to-text") || !l.modelSaw("please deploy the staging branch") {
		t.Fatal("the model did not get the transcript marked as a voice note")
	}
	reqs := stt.Requests()
	if len(reqs) != 1 || reqs[0].Model != "whisper-1" || reqs[0].FileName != "voice-note.ogg" || !bytes.Equal(reqs[0].Audio, audio) {
		t.Fatalf("transcription requests: %+v", reqs)
	}
	var path string
	for _, r := range l.srv.MessagesRequests() {
		for _, u := range fakemodel.UserTexts(r) {
			if m := regexp.MustCompile(`the audio is saved for you at (\S+)`).FindStringSubmatch(u); m != nil {
				path = m[1]
			}
		}
	}
	if got, err := os.ReadFile(path); err != nil || !bytes.Equal(got, audio) {
		t.Errorf("saved audio at %q: %v (%d bytes, want %d)", path, err, len(got), len(audio))
	}
	for _, c := range l.fake.Calls() {
		if strings.Contains(textOf(c), "sk-test") {
			t.Errorf("the api key reached the chat: %q", textOf(c))
		}
	}
}
