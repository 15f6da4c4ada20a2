package main

import (
	"bytes"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/agentbridge/agentbridge/agent/fakemodel"
	"github.com/agentbridge/agentbridge/bridges/adapters/discord/discordfake"
	"github.com/agentbridge/agentbridge/bridges/adapters/slack/slackfake"
	"github.com/agentbridge/agentbridge/bridges/features/transcribe/transcribetest"
)

// sttKey is the transcription api key of the voice tests: it must never
// reach the chat, the agent or the logs.
const sttKey = "sk-voice-e2e-secret"

// transcriptionYAML is config transcription pointing at the fake endpoint.
func transcriptionYAML(stt *transcribetest.Server) string {
	return fmt.Sprintf("transcription: { url: %q, model: whisper-1, api_key: %q }\n", stt.URL, sttKey)
}

// voiceReached checks that the model got the transcript marked as a voice
// note with the saved audio's path, and that the file there is audio.
func voiceReached(t *testing.T, model *fakemodel.Server, transcript string, audio []byte) {
	t.Helper()
	var marked bool
	var path string
	for _, r := range model.MessagesRequests() {
		for _, u := range fakemodel.UserTexts(r) {
			marked = marked || strings.Contains(u, "[voice note, transcribed by speech-to-text") && strings.Contains(u, transcript)
			if m := regexp.MustCompile(`the audio is saved for you at (\S+)`).FindStringSubmatch(u); m != nil {
				path = m[1]
			}
			if strings.Contains(u, sttKey) {
				t.Errorf("the agent got the transcription key: %q", u)
			}
		}
	}
	if !marked {
		t.Errorf("the model never got %q marked as a voice note", transcript)
	}
	if got, err := os.ReadFile(path); err != nil || !bytes.Equal(got, audio) {
		t.Errorf("the saved audio at %q: %v (%d bytes, want %d)", path, err, len(got), len(audio))
	}
}

// checkSTT checks the fake endpoint got exactly one request with the audio.
func checkSTT(t *testing.T, stt *transcribetest.Server, name string, audio []byte) {
	t.Helper()
	reqs := stt.Requests()
	if len(reqs) != 1 || reqs[0].Model != "whisper-1" || reqs[0].FileName != name || !bytes.Equal(reqs[0].Audio, audio) || reqs[0].Auth != "Bearer "+sttKey {
		t.Errorf("transcription requests = %d; first: %+v", len(reqs), reqs)
	}
}

// Issue 26, item 2: a Slack audio clip (a file with an audio mimetype) is
// downloaded from the fake's url_private_download, transcribed by the
// configured endpoint, shown in the thread under the note, and reaches
// the real CLI's model as a voice note with the audio's saved path.
func TestSlackE2EVoiceClip(t *testing.T) {
	t.Parallel()
	stt := transcribetest.NewServer(t, sttKey, "list the failing tests")
	e := startSlackBridgeWith(t, profileOptions{top: transcriptionYAML(stt)})
	audio := transcribetest.OggOpus()
	f := e.slack.AddFile("audio_message.ogg", "audio/ogg", audio)
	sent := e.slack.Send(slackfake.Msg{Channel: slackChan, User: alice, Text: "<@" + slackfake.BotUserID + ">", Files: []slackfake.File{f}})
	e.waitThreadText(t, sent.TS, "transcript_: list the failing tests")
	e.waitThreadText(t, sent.TS, "pong: ")
	if e.slack.FileDownloads() != 1 {
		t.Errorf("%d downloads of the clip, want 1", e.slack.FileDownloads())
	}
	checkSTT(t, stt, "audio_message.ogg", audio)
	voiceReached(t, e.model, "list the failing tests", audio)
	if strings.Contains(e.bridge.logs.String(), sttKey) {
		t.Error("the bridge logged the transcription key")
	}
}

// Without transcription configured, a clip alone gets a clear reply and
// never reaches the agent (no empty message, no download).
func TestSlackE2EVoiceClipNotSetUp(t *testing.T) {
	t.Parallel()
	e := startSlackBridge(t)
	f := e.slack.AddFile("audio_message.ogg", "audio/ogg", transcribetest.OggOpus())
	sent := e.slack.Send(slackfake.Msg{Channel: slackChan, User: alice, Text: "<@" + slackfake.BotUserID + ">", Files: []slackfake.File{f}})
	e.waitThreadText(t, sent.TS, "Voice notes are not set up on this bridge")
	e.slack.Mention(slackChan, alice, "hello after the clip", sent.TS)
	e.waitThreadText(t, sent.TS, "pong: hello after the clip")
	for _, r := range e.model.MessagesRequests() {
		for _, u := range fakemodel.UserTexts(r) {
			if strings.Contains(u, "audio_message") || strings.TrimSpace(u) == "" {
				t.Errorf("the agent got the unset-up voice note: %q", u)
			}
		}
	}
	if n := e.slack.FileDownloads(); n != 0 {
		t.Errorf("the clip was downloaded %d times without transcription", n)
	}
}

// Issue 26, item 2: a Discord voice message (flag IS_VOICE_MESSAGE, an
// Ogg Opus attachment with a duration and waveform, no content) in a DM
// is downloaded from the fake's attachment URL, transcribed, shown, and
// reaches the real CLI's model as a voice note.
func TestDiscordE2EVoiceMessage(t *testing.T) {
	t.Parallel()
	stt := transcribetest.NewServer(t, sttKey, "summarise the open pull requests")
	e := startDiscordBridgeOpts(t, profileOptions{top: transcriptionYAML(stt)}, "")
	const dm = "900000000000000051"
	audio := transcribetest.OggOpus()
	e.dc.Send(discordfake.UserMessage{ChannelID: dm, UserID: dAlice, Voice: true,
		Attachments: []discordfake.Attachment{{Filename: "voice-message.ogg", ContentType: "audio/ogg", Data: audio}}})
	e.waitText(t, dm, "transcript_: summarise the open pull requests")
	e.waitText(t, dm, "pong: ")
	checkSTT(t, stt, "voice-message.ogg", audio)
	voiceReached(t, e.model, "summarise the open pull requests", audio)
	if strings.Contains(e.bridge.logs.String(), sttKey) {
		t.Error("the bridge logged the transcription key")
	}
}
