package uploads_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core/sessiondir"
	"github.com/agentbridge/agentbridge/bridges/features/uploads"
	"github.com/agentbridge/agentbridge/bridges/kits/bridgetest"
)

// TestImagesCappedAtImageLimit: an image of each format the model takes
// reaches the agent up to MaxImageBytes and not beyond — neither when the
// platform announces the larger size nor when it announces less than it
// sends — while other files (an SVG too) have the document cap.
func TestImagesCappedAtImageLimit(t *testing.T) {
	ctx := context.Background()
	for _, mt := range []string{"image/jpeg", "image/png", "image/gif", "image/webp"} {
		if got := uploads.Limit(mt); got != uploads.MaxImageBytes {
			t.Errorf("Limit(%s) = %d, want the image cap %d", mt, got, uploads.MaxImageBytes)
		}
		plat := bridgetest.New(bridges.Limits{})
		plat.AddFile("fits", make([]byte, uploads.MaxImageBytes))
		plat.AddFile("liar", make([]byte, uploads.MaxImageBytes+1))
		h := &host{plat: plat, dir: t.TempDir()}
		files := []bridges.File{
			{ID: "fits", Name: "a", MimeType: mt, Size: uploads.MaxImageBytes},
			{ID: "big", Name: "b", MimeType: mt, Size: uploads.MaxImageBytes + 1},
			{ID: "liar", Name: "c", MimeType: mt, Size: 10},
		}
		imgs, notes := uploads.Fetch(ctx, h, "m1", files)
		if len(imgs) != 1 || len(imgs[0].Data) != uploads.MaxImageBytes {
			t.Errorf("%s: %d images, want only the one at the cap", mt, len(imgs))
		}
		if len(notes) != 2 || !strings.Contains(notes[0], "b is larger than") || !strings.Contains(notes[1], "could not be fetched: c") {
			t.Errorf("%s: notes %q", mt, notes)
		}
	}
	for _, mt := range []string{"image/svg+xml", "image/tiff", "application/pdf", "text/plain", ""} {
		if got := uploads.Limit(mt); got != uploads.MaxDocumentBytes {
			t.Errorf("Limit(%q) = %d, want the document cap %d", mt, got, uploads.MaxDocumentBytes)
		}
	}
}

// TestSaveOnlyUnderSessionRoot: whatever the message id and the file name
// hold (separators, "..", absolute paths), Save creates the file in the
// uploads directory and nowhere else in the session's directory or above.
func TestSaveOnlyUnderSessionRoot(t *testing.T) {
	names := []string{"../x", "../../x", "/etc/passwd", "a/../../b", "..", ".", "..\\..\\w", "sub/dir/f.txt", "", ".hidden"}
	for i, name := range names {
		for _, msgID := range []string{"m1", "../m2", "../../m3", "/abs/m4", "a/b"} {
			top := t.TempDir()
			session := filepath.Join(top, "sessions", "s1")
			dir := filepath.Join(session, sessiondir.Uploads)
			path, err := uploads.Save(dir, msgID, name, []byte("x"))
			if err != nil {
				t.Fatalf("Save(%q, %q): %v", msgID, name, err)
			}
			if filepath.Dir(path) != dir {
				t.Errorf("Save(%q, %q) = %s, want a file directly in %s", msgID, name, path, dir)
			}
			var found []string
			_ = filepath.Walk(top, func(p string, info os.FileInfo, err error) error {
				if err == nil && !info.IsDir() {
					found = append(found, p)
				}
				return nil
			})
			if len(found) != 1 || found[0] != path {
				t.Errorf("case %d: Save(%q, %q) wrote %v, want only %s", i, msgID, name, found, path)
			}
		}
	}
}
