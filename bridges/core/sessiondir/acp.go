package sessiondir

import (
	"os"
	"path"
	"strings"
)

// The parts of an ACP agent's session state directory (package agent:
// acpDir, acpHome, acpSessionFile keep the same names).
const (
	// ACPDir holds the bridge's record of the agent's own session id
	// (ACPRecord) and its counted cost: read-only in the sandbox.
	ACPDir = "acp"
	// ACPHome is the agent's private HOME when its profile sets no home:
	// the agent's own session store lives there (session/load reads it).
	ACPHome = "home"
	// ACPRecord holds the agent's session id that session/load resumes.
	ACPRecord = ACPDir + "/session"
)

// IsACP reports whether stateDir is the state directory of an ACP
// agent's session that has an agent session to resume: a regular,
// non-empty file ACPRecord (written when the agent answered session/new).
// Nothing is followed out of stateDir (os.Root) and a link does not count.
// A Claude Code session's directory never has one (the bridge writes it
// for kind acp only, in a directory the agent cannot write).
func IsACP(stateDir string) bool {
	root, err := os.OpenRoot(stateDir)
	if err != nil {
		return false
	}
	defer root.Close()
	info, err := root.Lstat(ACPRecord)
	return err == nil && info.Mode().IsRegular() && info.Size() > 0
}

// HasSession reports whether stateDir holds what a resume of session
// sessionID needs: a Claude Code transcript (HasTranscript) or an ACP
// agent's record of its session (IsACP). A session without either never
// finished a turn here, whatever its kind.
func HasSession(stateDir, sessionID string) bool {
	return HasTranscript(stateDir, sessionID) || IsACP(stateDir)
}

// CarriedACP reports whether p (slash-separated, relative to an ACP
// session's state directory) is session state to keep in the store with
// the session: under ACPDir or ACPHome, but not the caches an agent
// fills again by itself — home/.cache, home/.npm and any node_modules.
// It is asked of directories as well as files.
func CarriedACP(p string) bool {
	first, rest, _ := strings.Cut(p, "/")
	switch first {
	case ACPDir:
		return true
	case ACPHome:
	default:
		return false
	}
	if top, _, _ := strings.Cut(rest, "/"); top == ".cache" || top == ".npm" {
		return false
	}
	for d := p; d != "." && d != "/"; d = path.Dir(d) {
		if path.Base(d) == "node_modules" {
			return false
		}
	}
	return true
}
