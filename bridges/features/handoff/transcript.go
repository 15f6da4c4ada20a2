package handoff

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/google/uuid"
)

// This file knows where the Claude Code CLI keeps a session: the
// transcript CONFIG_DIR/projects/<the cwd, escaped>/<session id>.jsonl,
// where CONFIG_DIR is CLAUDE_CONFIG_DIR or ~/.claude. `claude --resume
// ID` run in a directory finds the session there (checked against the
// pinned CLI in transcript_cli_test.go). The bridge gives each session
// its own config dir: data_dir/sessions/<id>/claude (agent.Options.StateDir).

// MaxTranscript bounds a transcript exported or imported (64 MiB).
const MaxTranscript = 64 << 20

// ProjectDirName is the directory name the CLI keeps cwd's sessions under:
// cwd with every character but ASCII letters and digits replaced by '-',
// one per UTF-16 code unit as the CLI (JavaScript) counts them: two for a
// character beyond the Basic Multilingual Plane.
func ProjectDirName(cwd string) string {
	var b strings.Builder
	for _, r := range cwd {
		switch {
		case 'a' <= r && r <= 'z', 'A' <= r && r <= 'Z', '0' <= r && r <= '9':
			b.WriteRune(r)
		case r > 0xFFFF:
			b.WriteString("--")
		default:
			b.WriteByte('-')
		}
	}
	return b.String()
}

// TranscriptPath is where `claude --resume sessionID` run in cwd finds the
// session, under the CLI config dir configDir.
func TranscriptPath(configDir, cwd, sessionID string) string {
	return filepath.Join(configDir, "projects", ProjectDirName(cwd), sessionID+".jsonl")
}

// validSessionID reports whether id is a session id the bridge accepts:
// a UUID in its canonical form (it names directories).
func validSessionID(id string) bool {
	u, err := uuid.Parse(id)
	return err == nil && u.String() == id
}

// readTranscript reads session id's transcript from its state directory
// (data_dir/sessions/<id>/claude): the newest projects/*/<id>.jsonl. The
// agent can write there, so nothing is followed out of that directory
// (os.Root) and only a regular file is read. It returns the transcript up
// to its last complete line.
func readTranscript(cliDir, id string) ([]byte, error) {
	root, err := os.OpenRoot(cliDir)
	if err != nil {
		return nil, fmt.Errorf("open session state: %w", err)
	}
	defer root.Close()
	matches, err := fs.Glob(root.FS(), path.Join("projects", "*", id+".jsonl"))
	if err != nil {
		return nil, fmt.Errorf("find transcript: %w", err)
	}
	var best string
	var bestInfo fs.FileInfo
	for _, m := range matches {
		info, err := root.Lstat(m)
		if err != nil || !info.Mode().IsRegular() {
			continue
		}
		if bestInfo == nil || info.ModTime().After(bestInfo.ModTime()) {
			best, bestInfo = m, info
		}
	}
	if best == "" {
		return nil, fs.ErrNotExist
	}
	f, err := root.Open(best)
	if err != nil {
		return nil, fmt.Errorf("open transcript: %w", err)
	}
	defer f.Close()
	if info, err := f.Stat(); err != nil || !info.Mode().IsRegular() {
		return nil, errors.New("the transcript is not a regular file")
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxTranscript+1))
	if err != nil {
		return nil, fmt.Errorf("read transcript: %w", err)
	}
	if len(b) > MaxTranscript {
		return nil, fmt.Errorf("the transcript is larger than %d MiB", MaxTranscript>>20)
	}
	return b[:bytes.LastIndexByte(b, '\n')+1], nil // a line being written is left out
}

// checkTranscript checks that b is a Claude Code session transcript for
// session id: JSON objects, one per line, and every sessionId field they
// carry is id. It returns the number of user and assistant messages.
func checkTranscript(b []byte, id string) (int, error) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 64<<10), MaxTranscript)
	messages, n := 0, 0
	for sc.Scan() {
		n++
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var rec struct {
			Type      string `json:"type"`
			SessionID string `json:"sessionId"`
		}
		if err := json.Unmarshal(line, &rec); err != nil {
			return 0, fmt.Errorf("line %d is not a JSON object: %w", n, err)
		}
		if rec.SessionID != "" && rec.SessionID != id {
			return 0, fmt.Errorf("line %d belongs to session %s, not %s (name the file <session id>.jsonl)", n, rec.SessionID, id)
		}
		if rec.Type == "user" || rec.Type == "assistant" {
			messages++
		}
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("read transcript: %w", err)
	}
	if messages == 0 {
		return 0, errors.New("no user or assistant message in it: not a Claude Code session transcript")
	}
	return messages, nil
}

// writeTranscript writes b as session id's transcript for an agent whose
// cwd is workdir, in the session's new state directory cliDir
// (data_dir/sessions/<id>/claude), private to the bridge and that agent.
// It refuses to overwrite an existing state directory.
func writeTranscript(cliDir, workdir, id string, b []byte) error {
	state := filepath.Dir(cliDir)
	if err := os.MkdirAll(filepath.Dir(state), 0o700); err != nil {
		return fmt.Errorf("create sessions directory: %w", err)
	}
	if err := os.Mkdir(state, 0o700); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("session %s already has state in the bridge: %w", id, fs.ErrExist)
		}
		return fmt.Errorf("create session state: %w", err)
	}
	p := TranscriptPath(cliDir, workdir, id)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return fmt.Errorf("create transcript directory: %w", err)
	}
	if err := os.WriteFile(p, b, 0o600); err != nil {
		return fmt.Errorf("write transcript: %w", err)
	}
	return nil
}

// sessionOfFile is the session id a transcript file's name gives
// (<id>.jsonl), or "".
func sessionOfFile(name string) string {
	id, ok := strings.CutSuffix(filepath.Base(name), ".jsonl")
	if !ok || !validSessionID(id) {
		return ""
	}
	return id
}
