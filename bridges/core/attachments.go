package core

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/render"
	"github.com/agentbridge/agentbridge/bridges/uploads"
	"github.com/agentbridge/agentbridge/store"
)

// UploadsDir is where a session keeps the files people send (uploads.Dir).
const UploadsDir = uploads.Dir

// fetchAttachments downloads the attachments of ledger message m through
// the platform's FileFetcher: images go to the agent as image blocks,
// other files are saved in the session's uploads directory and named to
// the agent by path. A file larger than its cap (by the size the platform
// announced) is not downloaded: the conversation is told why, and the
// agent gets a note. Every file the agent does not get is noted for it.
func (cv *conversation) fetchAttachments(ctx context.Context, msgID string, files []bridges.File) ([]streamjson.Image, []string) {
	ff, _ := cv.platform.(bridges.FileFetcher)
	var imgs []streamjson.Image
	var notes []string
	for _, f := range files {
		if isAudio(f) && ff != nil { // attachments.go
			if note, ok := cv.voiceNote(ctx, ff, msgID, f); ok {
				notes = append(notes, note)
				continue
			}
		}
		image, limit := uploads.IsImage(f.MimeType), uploads.Limit(f.MimeType)
		dir := cv.uploadsDir()
		switch {
		case ff == nil || !image && dir == "":
			notes = append(notes, fmt.Sprintf("[attachment not forwarded: %s (%s)]", f.Name, f.MimeType))
			continue
		case f.Size > limit:
			cv.log.Info("attachment refused: too large", "file", f.Name, "bytes", f.Size, "limit", limit)
			cv.notice(ctx, fmt.Sprintf("📎 %s is too large (%s): files up to %s reach the agent.", render.CodeSpan(f.Name), render.ByteSize(f.Size), render.ByteSize(limit)))
			notes = append(notes, fmt.Sprintf("[attachment not forwarded: %s is larger than %s]", f.Name, render.ByteSize(limit)))
			continue
		}
		data, err := ff.FetchFile(ctx, f, limit)
		if err != nil {
			cv.log.Warn("fetch attachment", "file", f.Name, "err", err)
			notes = append(notes, fmt.Sprintf("[attachment could not be fetched: %s]", f.Name))
			continue
		}
		if image {
			imgs = append(imgs, streamjson.Image{MediaType: f.MimeType, Data: data})
			continue
		}
		path, err := uploads.Save(dir, msgID, f.Name, data)
		if err != nil {
			cv.log.Error("save attachment for the agent", "file", f.Name, "err", err)
			notes = append(notes, fmt.Sprintf("[attachment could not be saved: %s]", f.Name))
			continue
		}
		notes = append(notes, fmt.Sprintf("[attached file saved for you at %s (%s, %s)]", path, orDefault(f.MimeType, "unknown type"), render.ByteSize(int64(len(data)))))
	}
	return imgs, notes
}

// uploadsDir is where this conversation's session keeps uploads, "" when
// the bridge keeps no session state (no data_dir).
func (cv *conversation) uploadsDir() string {
	if cv.core.cfg().DataDir == "" || cv.row.SessionID == "" {
		return ""
	}
	dir, err := filepath.Abs(filepath.Join(cv.core.cfg().DataDir, SessionsDir, cv.row.SessionID, UploadsDir))
	if err != nil {
		return ""
	}
	return dir
}

// Transcriber turns a voice note into text (bridges/transcribe.Client,
// wired from config transcription as CoreOptions.Transcriber). Transcribe
// blocks for at most its own timeout; an empty transcript is an error. The
// core calls it from a conversation's worker, only for the audio of a
// person who may talk to the bot.
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
	maxVoiceBytes = uploads.MaxDocumentBytes
)

// isAudio reports whether f is a voice note or an audio file.
func isAudio(f bridges.File) bool {
	return f.Voice || strings.HasPrefix(strings.ToLower(f.MimeType), "audio/")
}

// refuseVoiceOff handles ledger message m when it holds nothing but
// audio (no text, no other file) and no transcription is configured: the
// conversation is told that voice is not set up and it reports true — the
// message is finished, never an empty message to the agent. Audio beside
// text or other files goes on, as a saved file (voiceOff).
func (cv *conversation) refuseVoiceOff(ctx context.Context, m store.InboxMessage) bool {
	if cv.core.opts.Transcriber != nil || strings.TrimSpace(m.Text) != "" || strings.TrimSpace(m.Quoted) != "" {
		return false
	}
	files := decodeFiles(m.Files)
	for _, f := range files {
		if !isAudio(f) {
			return false
		}
	}
	if len(files) == 0 {
		return false
	}
	cv.log.Info("voice note not transcribed: no transcription configured", "ledger", m.ID)
	cv.notice(ctx, voiceOffText)
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
func (cv *conversation) voiceNote(ctx context.Context, ff bridges.FileFetcher, msgID string, f bridges.File) (string, bool) {
	if cv.core.opts.Transcriber == nil {
		cv.notice(ctx, voiceOffBesideText)
		return "", false
	}
	name := orDefault(f.Name, "voice note")
	if f.Size > maxVoiceBytes {
		cv.notice(ctx, fmt.Sprintf("🎙️ %s is too long to transcribe (%s): voice notes up to %s are.", render.CodeSpan(name), render.ByteSize(f.Size), render.ByteSize(maxVoiceBytes)))
		return fmt.Sprintf("[voice note not transcribed: %s is larger than %s]", name, render.ByteSize(maxVoiceBytes)), true
	}
	data, err := ff.FetchFile(ctx, f, maxVoiceBytes)
	if err != nil {
		cv.log.Warn("fetch voice note", "file", name, "err", err)
		cv.notice(ctx, "🎙️ I could not download this voice note, so the agent did not get it. Please send it again or type your message.")
		return fmt.Sprintf("[voice note could not be fetched: %s]", name), true
	}
	saved := ""
	if dir := cv.uploadsDir(); dir != "" {
		if path, err := uploads.Save(dir, msgID, name, data); err != nil {
			cv.log.Error("save voice note for the agent", "file", name, "err", err)
		} else {
			saved = fmt.Sprintf("\n[the audio is saved for you at %s (%s, %s)]", path, orDefault(f.MimeType, "unknown type"), render.ByteSize(int64(len(data))))
		}
	}
	text, err := cv.core.opts.Transcriber.Transcribe(ctx, data, name, f.MimeType)
	if err != nil {
		cv.log.Warn("transcribe voice note", "file", name, "bytes", len(data), "err", err)
		cv.notice(ctx, "🎙️ I could not transcribe this voice note, so the agent got only the audio file. Please type your message if it matters.")
		return "[a voice note that could not be transcribed]" + saved, true
	}
	cv.log.Info("voice note transcribed", "file", name, "bytes", len(data), "chars", len(text))
	cv.notice(ctx, voiceTranscriptPrefix+text)
	return "[voice note, transcribed by speech-to-text (it may contain recognition errors)]\n" + text + saved, true
}
