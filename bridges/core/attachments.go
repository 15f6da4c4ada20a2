package core

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core/sessiondir"
)

// Files turns the files of a person's message into what the agent gets
// (bridges/features/uploads: images as image blocks, voice notes transcribed, the
// rest saved in the session's uploads directory); set as
// CoreOptions.Files. Its methods run on the conversation's worker.
type Files interface {
	// Refuse reports whether the ledger message (msgID, text, quoted text,
	// files) must not reach the agent — audio alone while no
	// transcription is set up — once it told the conversation why.
	Refuse(ctx context.Context, c Conv, msgID, text, quoted string, files []bridges.File) bool
	// Fetch returns the images the agent gets and a note for every other
	// file (saved under c.UploadsDir(), or not forwarded and why).
	Fetch(ctx context.Context, c Conv, msgID string, files []bridges.File) ([]streamjson.Image, []string)
	// Transcribes reports whether voice notes are transcribed.
	Transcribes() bool
}

// UploadsDir is the directory, inside a session's private state
// (data_dir/sessions/<id>), where the files people send are saved for the
// agent (bridges/features/uploads); the sandbox lets the agent see it at the same
// path.
const UploadsDir = "uploads"

// Platform is the adapter of the conversation's bot.
func (c Conv) Platform() bridges.Platform { return c.cv.platform }

// UploadsDir is where the conversation's session keeps the files people
// send (an absolute path), "" when the bridge keeps no session state (no
// data_dir) or there is no session yet.
func (c Conv) UploadsDir() string { return c.cv.uploadsDir() }

// uploadsDir is where this conversation's session keeps uploads, "" when
// the bridge keeps no session state (no data_dir).
func (cv *conversation) uploadsDir() string {
	if cv.core.cfg().DataDir == "" || cv.row.SessionID == "" {
		return ""
	}
	dir, err := filepath.Abs(filepath.Join(cv.core.cfg().DataDir, sessiondir.Dir, cv.row.SessionID, UploadsDir))
	if err != nil {
		return ""
	}
	return dir
}

// encodeFiles stores a message's files in the ledger as JSON (nil when
// none).
func encodeFiles(files []bridges.File) ([]byte, error) {
	if len(files) == 0 {
		return nil, nil
	}
	b, err := json.Marshal(files)
	if err != nil {
		return nil, fmt.Errorf("encode attachments: %w", err)
	}
	return b, nil
}

// decodeFiles reads a message's files back from the ledger.
func decodeFiles(b []byte) []bridges.File {
	if len(b) == 0 {
		return nil
	}
	var files []bridges.File
	if err := json.Unmarshal(b, &files); err != nil {
		return nil
	}
	return files
}
