package uploads

import (
	"context"
	"fmt"
	"strings"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core/render"
	"github.com/agentbridge/agentbridge/internal/textcut"
)

// Transcriber turns a voice note into text (bridges/features/transcribe.Client,
// wired from config transcription into New).
// Transcribe blocks for at most its own timeout; an empty transcript is an
// error. It is called from a conversation's worker, only for the audio of
// a person who may talk to the bot.
type Transcriber interface {
	Transcribe(ctx context.Context, audio []byte, name, mimeType string) (string, error)
}

// Voice note texts.
const (
	// voiceOffText answers a voice note while no transcription is set up.
	voiceOffText = "🎙️ Voice notes are not set up on this bridge (no transcription is configured), so the agent did not get this one. Please type your message."
	// voiceOffBesideText tells that a voice note beside text reached the
	// agent as a file only.
	voiceOffBesideText = "🎙️ Voice notes are not set up on this bridge (no transcription is configured): the agent got your text and the audio file, not what was said."
	// voiceTranscriptPrefix starts the transcript shown under a note.
	voiceTranscriptPrefix = "🎙️ _transcript_: "
	// maxVoiceBytes caps a voice note (the transcription APIs' own limit is 25 MB).
	maxVoiceBytes = MaxDocumentBytes
)

// isAudio reports whether f is a voice note or an audio file.
func isAudio(f bridges.File) bool {
	return f.Voice || strings.HasPrefix(strings.ToLower(f.MimeType), "audio/")
}

// RefuseVoiceOff handles a ledger message (id, text, quoted text, files)
// when it holds nothing but audio (no text, no other file) and no
// transcription is configured: the conversation is told that voice is not
// set up and it reports true — the message is finished, never an empty
// message to the agent. Audio beside text or other files goes on, as a
// saved file (voiceNote).
func RefuseVoiceOff(ctx context.Context, h Host, id, text, quoted string, files []bridges.File) bool {
	if h.Transcriber() != nil || strings.TrimSpace(text) != "" || strings.TrimSpace(quoted) != "" {
		return false
	}
	for _, f := range files {
		if !isAudio(f) {
			return false
		}
	}
	if len(files) == 0 {
		return false
	}
	h.Log().Info("voice note not transcribed: no transcription configured", "ledger", id)
	h.Notice(ctx, voiceOffText)
	return true
}

// voiceNote downloads voice note f of ledger message msgID through ff,
// saves it in the session's uploads for the agent's tools, transcribes it,
// shows the transcript under the note (so people can check what the agent
// got) and returns the agent's note: the transcript marked as a voice
// note, and the saved file's path. Failures are told in the conversation
// and noted for the agent; they never send an empty message.
//
// Without transcription it tells the conversation so and reports false:
// the caller saves the audio like any other file.
func voiceNote(ctx context.Context, h Host, ff bridges.FileFetcher, msgID string, f bridges.File) (string, bool) {
	tr := h.Transcriber()
	if tr == nil {
		h.Notice(ctx, voiceOffBesideText)
		return "", false
	}
	name := textcut.OrBlank(f.Name, "voice note")
	if f.Size > maxVoiceBytes {
		h.Notice(ctx, fmt.Sprintf("🎙️ %s is too long to transcribe (%s): voice notes up to %s are.", render.CodeSpan(name), render.ByteSize(f.Size), render.ByteSize(maxVoiceBytes)))
		return fmt.Sprintf("[voice note not transcribed: %s is larger than %s]", name, render.ByteSize(maxVoiceBytes)), true
	}
	data, err := ff.FetchFile(ctx, f, maxVoiceBytes)
	if err != nil {
		h.Log().Warn("fetch voice note", "file", name, "err", err)
		h.Notice(ctx, "🎙️ I could not download this voice note, so the agent did not get it. Please send it again or type your message.")
		return fmt.Sprintf("[voice note could not be fetched: %s]", name), true
	}
	saved := ""
	if dir := h.Dir(); dir != "" {
		if path, err := Save(dir, msgID, name, data); err != nil {
			h.Log().Error("save voice note for the agent", "file", name, "err", err)
		} else {
			saved = fmt.Sprintf("\n[the audio is saved for you at %s (%s, %s)]", path, textcut.OrBlank(f.MimeType, "unknown type"), render.ByteSize(int64(len(data))))
		}
	}
	text, err := tr.Transcribe(ctx, data, name, f.MimeType)
	if err != nil {
		h.Log().Warn("transcribe voice note", "file", name, "bytes", len(data), "err", err)
		h.Notice(ctx, "🎙️ I could not transcribe this voice note, so the agent got only the audio file. Please type your message if it matters.")
		return "[a voice note that could not be transcribed]" + saved, true
	}
	h.Log().Info("voice note transcribed", "file", name, "bytes", len(data), "chars", len(text))
	h.Notice(ctx, voiceTranscriptPrefix+text)
	return "[voice note, transcribed by speech-to-text (it may contain recognition errors)]\n" + text + saved, true
}
