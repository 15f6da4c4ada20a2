package handoff

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// An exported transcript was written by the agent: its session state
// directory is the agent's to write, so any line of it may be the agent's
// own. The person resumes it with an unsandboxed `claude --resume`, which
// restores per-session state from some lines (the CLI's session metadata
// entries: permission mode, mode, agent definition, worktree, working
// directory…) and keeps per-message fields. Export therefore keeps only the
// kinds of lines that carry the conversation itself and resets the
// per-line state a resumed CLI could take over; what the lines say (the
// history the model reads) cannot be made safe and is the person's to
// judge (docs/handoff.md).

// keptLineTypes are the transcript line types export keeps: the messages,
// their attachments, system notes, compaction summaries and titles — what
// the history is. Every other type is dropped, above all the CLI's session
// state entries it restores on resume ("permission-mode", "mode",
// "agent-setting", "worktree-state", "relocated", "repl-mode",
// "session-owner", "dev-mods", "memory-mode", …), its caches and replay
// records (file-history snapshots, which /rewind writes back to disk;
// content replacements, which name files; queued prompts; recorded API
// requests) and any type unknown to this list.
var keptLineTypes = map[string]bool{
	"user": true, "assistant": true, "attachment": true, "system": true, "summary": true, "progress": true,
	"custom-title": true, "ai-title": true, "tag": true,
}

// resetFields are per-line fields export sets to the value a fresh
// session of the person's CLI writes, when a kept line carries another.
var resetFields = map[string]string{
	"permissionMode": "default",  // on user lines: the mode the message was sent in
	"userType":       "external", // the CLI's build kind
}

// Normalized says what normalizeTranscript changed.
type Normalized struct {
	Dropped map[string]int // dropped lines by type ("" = not a JSON object or no type)
	Reset   int            // kept lines whose per-line state was reset
}

// Changed reports whether anything was dropped or reset.
func (n Normalized) Changed() bool { return len(n.Dropped) > 0 || n.Reset > 0 }

// String lists what was changed, e.g. "dropped 2 permission-mode, 1
// worktree-state; reset 3 lines".
func (n Normalized) String() string {
	var parts []string
	for _, t := range slices.Sorted(maps.Keys(n.Dropped)) {
		name := t
		if name == "" {
			name = "malformed"
		}
		parts = append(parts, strconv.Itoa(n.Dropped[t])+" "+name)
	}
	var b strings.Builder
	if len(parts) > 0 {
		b.WriteString("dropped " + strings.Join(parts, ", "))
	}
	if n.Reset > 0 {
		if b.Len() > 0 {
			b.WriteString("; ")
		}
		b.WriteString("reset " + strconv.Itoa(n.Reset) + " lines")
	}
	return b.String()
}

// normalizeTranscript returns transcript b (JSON lines) with only
// keptLineTypes lines, each re-encoded from its fields (keys in sorted
// order, one per name: a line with a duplicate key reads the same to any
// JSON parser afterwards) and with resetFields reset: no line of the
// result sets bypassPermissions or any other permission mode, agent,
// worktree or working directory for the resumed session. It never fails:
// a line it cannot read is dropped.
func normalizeTranscript(b []byte) ([]byte, Normalized) {
	n := Normalized{Dropped: map[string]int{}}
	out := make([]byte, 0, len(b))
	for len(b) > 0 {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		kept, reset, typ := normalizeLine(line)
		if kept == nil {
			n.Dropped[typ]++
			continue
		}
		if reset {
			n.Reset++
		}
		out = append(append(out, kept...), '\n')
	}
	if len(n.Dropped) == 0 {
		n.Dropped = nil
	}
	return out, n
}

// normalizeLine returns line as export keeps it, re-encoded (nil:
// dropped), whether per-line state was reset, and the line's type.
func normalizeLine(line []byte) (kept []byte, reset bool, typ string) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(line, &fields); err != nil || fields == nil {
		return nil, false, ""
	}
	if err := json.Unmarshal(fields["type"], &typ); err != nil || !keptLineTypes[typ] {
		return nil, false, typ
	}
	for name, want := range resetFields {
		raw, ok := fields[name]
		if !ok {
			continue
		}
		var v string
		if json.Unmarshal(raw, &v) == nil && v == want {
			continue
		}
		fields[name], _ = json.Marshal(want)
		reset = true
	}
	kept, err := json.Marshal(fields)
	if err != nil {
		return nil, false, typ
	}
	return kept, reset, typ
}
