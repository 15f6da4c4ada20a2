package uploads

import (
	"context"
	"log/slog"

	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core/worker"
)

// This file is the package as the core's Files: what a person's files
// become for the agent, registered as core.CoreOptions.Files.

// Files is the core's Files: voice notes transcribed with its Transcriber
// (or refused when there is none), images as image blocks, the rest saved
// in the session's uploads directory.
type Files struct{ tr Transcriber }

// New returns the core's Files; tr transcribes voice notes (nil: none is
// set up, and voice notes are answered so).
func New(tr Transcriber) *Files { return &Files{tr: tr} }

var _ worker.Files = (*Files)(nil)

// Refuse implements worker.Files (RefuseVoiceOff).
func (f *Files) Refuse(ctx context.Context, c worker.Conv, msgID, text, quoted string, files []bridges.File) bool {
	return RefuseVoiceOff(ctx, convHost{c, f.tr}, msgID, text, quoted, files)
}

// Fetch implements worker.Files (Fetch).
func (f *Files) Fetch(ctx context.Context, c worker.Conv, msgID string, files []bridges.File) ([]streamjson.Image, []string) {
	return Fetch(ctx, convHost{c, f.tr}, msgID, files)
}

// Transcribes implements worker.Files.
func (f *Files) Transcribes() bool { return f.tr != nil }

// convHost is a conversation of the core as Host.
type convHost struct {
	c  worker.Conv
	tr Transcriber
}

func (h convHost) Log() *slog.Logger                    { return h.c.Log() }
func (h convHost) Platform() bridges.Platform           { return h.c.Platform() }
func (h convHost) Notice(ctx context.Context, t string) { h.c.Notice(ctx, t) }
func (h convHost) Dir() string                          { return h.c.UploadsDir() }
func (h convHost) Transcriber() Transcriber             { return h.tr }
