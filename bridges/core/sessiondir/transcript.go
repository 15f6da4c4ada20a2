package sessiondir

import (
	"io/fs"
	"os"
	"path"
)

// HasTranscript reports whether the session state directory stateDir
// (data_dir/sessions/<id>) holds a transcript of session sessionID that
// `claude --resume` could load: a regular file
// claude/projects/<project>/<sessionID>.jsonl. The agent can write there:
// nothing is followed out of stateDir (os.Root) and only a regular file
// counts. A session without one never finished a turn here.
func HasTranscript(stateDir, sessionID string) bool {
	root, err := os.OpenRoot(stateDir)
	if err != nil {
		return false
	}
	defer root.Close()
	matches, err := fs.Glob(root.FS(), path.Join("claude", "projects", "*", sessionID+".jsonl"))
	if err != nil {
		return false
	}
	for _, m := range matches {
		if info, err := root.Lstat(m); err == nil && info.Mode().IsRegular() {
			return true
		}
	}
	return false
}
