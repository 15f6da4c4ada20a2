package core

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/render"
	"github.com/agentbridge/agentbridge/bridges/uploads"
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
		if isAudio(f) && ff != nil { // voice.go
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
			cv.notice(ctx, fmt.Sprintf("📎 %s is too large (%s): files up to %s reach the agent.", codeSpan(f.Name), render.ByteSize(f.Size), render.ByteSize(limit)))
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
