package core

import (
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core/sessiondir"
)

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
