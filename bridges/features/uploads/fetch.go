package uploads

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core/render"
	"github.com/agentbridge/agentbridge/internal/textcut"
)

// Host is the conversation a person's files arrive in, as its worker
// offers it. Every method is called on that worker.
type Host interface {
	Log() *slog.Logger
	Platform() bridges.Platform // a FileFetcher, or files are not forwarded
	// Notice posts text into the conversation.
	Notice(ctx context.Context, text string)
	// Dir is where the conversation's session keeps uploads (an absolute
	// path), "" when the bridge keeps no session state.
	Dir() string
	// Transcriber transcribes voice notes; nil when none is configured.
	Transcriber() Transcriber
}

// Fetch downloads the attachments of ledger message msgID through
// the platform's FileFetcher: images go to the agent as image blocks,
// other files are saved in the session's uploads directory and named to
// the agent by path. A file larger than its cap (by the size the platform
// announced) is not downloaded: the conversation is told why, and the
// agent gets a note. Every file the agent does not get is noted for it.
func Fetch(ctx context.Context, h Host, msgID string, files []bridges.File) ([]streamjson.Image, []string) {
	ff, _ := h.Platform().(bridges.FileFetcher)
	var imgs []streamjson.Image
	var notes []string
	for _, f := range files {
		if isAudio(f) && ff != nil { // voice.go
			if note, ok := voiceNote(ctx, h, ff, msgID, f); ok {
				notes = append(notes, note)
				continue
			}
		}
		image, limit := IsImage(f.MimeType), Limit(f.MimeType)
		dir := h.Dir()
		switch {
		case ff == nil || !image && dir == "":
			notes = append(notes, fmt.Sprintf("[attachment not forwarded: %s (%s)]", f.Name, f.MimeType))
			continue
		case f.Size > limit:
			h.Log().Info("attachment refused: too large", "file", f.Name, "bytes", f.Size, "limit", limit)
			h.Notice(ctx, fmt.Sprintf("📎 %s is too large (%s): files up to %s reach the agent.", render.CodeSpan(f.Name), render.ByteSize(f.Size), render.ByteSize(limit)))
			notes = append(notes, fmt.Sprintf("[attachment not forwarded: %s is larger than %s]", f.Name, render.ByteSize(limit)))
			continue
		}
		data, err := ff.FetchFile(ctx, f, limit)
		if err != nil {
			h.Log().Warn("fetch attachment", "file", f.Name, "err", err)
			notes = append(notes, fmt.Sprintf("[attachment could not be fetched: %s]", f.Name))
			continue
		}
		if image {
			imgs = append(imgs, streamjson.Image{MediaType: f.MimeType, Data: data})
			continue
		}
		path, err := Save(dir, msgID, f.Name, data)
		if err != nil {
			h.Log().Error("save attachment for the agent", "file", f.Name, "err", err)
			notes = append(notes, fmt.Sprintf("[attachment could not be saved: %s]", f.Name))
			continue
		}
		notes = append(notes, fmt.Sprintf("[attached file saved for you at %s (%s, %s)]", path, textcut.OrBlank(f.MimeType, "unknown type"), render.ByteSize(int64(len(data)))))
	}
	return imgs, notes
}
