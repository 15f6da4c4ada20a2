package core

import (
	"context"
	"log/slog"
	"path/filepath"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/uploads"
)

// UploadsDir is where a session keeps the files people send (uploads.Dir).
const UploadsDir = uploads.Dir

// Transcriber turns a voice note into text (uploads.Transcriber; wired as
// CoreOptions.Transcriber).
type Transcriber = uploads.Transcriber

// uploadHost is the conversation as the fetching of its files
// (bridges/uploads) sees it; its methods run on the worker.
type uploadHost struct{ cv *conversation }

var _ uploads.Host = uploadHost{}

func (h uploadHost) Log() *slog.Logger                    { return h.cv.log }
func (h uploadHost) Platform() bridges.Platform           { return h.cv.platform }
func (h uploadHost) Notice(ctx context.Context, t string) { h.cv.notice(ctx, t) }
func (h uploadHost) Dir() string                          { return h.cv.uploadsDir() }
func (h uploadHost) Transcriber() uploads.Transcriber     { return h.cv.core.opts.Transcriber }

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
