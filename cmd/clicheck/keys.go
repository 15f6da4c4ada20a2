package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// maxDepth bounds how deep field paths go: deeper members (tool inputs,
// usage breakdowns) say little about the protocol and vary by scenario.
const maxDepth = 4

// Shape is what a capture shows of the wire: for each frame kind, the
// field paths seen on frames of that kind (the union over all of them),
// each with the JSON kinds of its values ("string", "number", "object",
// "array", "bool", "null").
type Shape map[string]map[string]map[string]bool

// FrameKind names a frame by what a host dispatches on: the type, then the
// subtype the type carries (system's subtype, a control request's
// request.subtype, a control response's response.subtype, a stream event's
// event.type).
func FrameKind(m map[string]any) string {
	typ, _ := m["type"].(string)
	sub := ""
	switch typ {
	case "control_request":
		if r, ok := m["request"].(map[string]any); ok {
			sub, _ = r["subtype"].(string)
		}
	case "control_response":
		if r, ok := m["response"].(map[string]any); ok {
			sub, _ = r["subtype"].(string)
		}
	case "stream_event":
		if e, ok := m["event"].(map[string]any); ok {
			sub, _ = e["type"].(string)
		}
	default:
		sub, _ = m["subtype"].(string)
	}
	if sub == "" {
		return typ
	}
	return typ + "/" + sub
}

// Add records one CLI→host frame.
func (s Shape) Add(m map[string]any) {
	kind := FrameKind(m)
	set := s[kind]
	if set == nil {
		set = map[string]map[string]bool{}
		s[kind] = set
	}
	addPaths(set, "", m, 0)
}

// addPaths adds the dotted paths of v's members; an array's elements share
// the path segment "[]".
func addPaths(set map[string]map[string]bool, prefix string, v any, depth int) {
	if depth >= maxDepth {
		return
	}
	switch x := v.(type) {
	case map[string]any:
		for k, c := range x {
			p := k
			if prefix != "" {
				p = prefix + "." + k
			}
			if set[p] == nil {
				set[p] = map[string]bool{}
			}
			set[p][jsonKind(c)] = true
			addPaths(set, p, c, depth+1)
		}
	case []any:
		for _, c := range x {
			addPaths(set, prefix+"[]", c, depth) // an array is no level of its own
		}
	}
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case bool:
		return "bool"
	case float64, json.Number:
		return "number"
	case []any:
		return "array"
	default:
		return "object"
	}
}

func kinds(set map[string]bool) string {
	var ks []string
	for k := range set {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return strings.Join(ks, "|")
}

// ReadShape reads the CLI→host frames of the captures at path: a .jsonl
// file or every transcript-*.jsonl of a directory, in the transcript format
// {"t","dir","msg"} (lines of another direction are skipped).
func ReadShape(path string) (Shape, error) {
	files := []string{path}
	if fi, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("read shape: %w", err)
	} else if fi.IsDir() {
		files, err = filepath.Glob(filepath.Join(path, "transcript-*.jsonl"))
		if err != nil || len(files) == 0 {
			return nil, fmt.Errorf("read shape: no transcript-*.jsonl in %s", path)
		}
	}
	s := Shape{}
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			return nil, fmt.Errorf("read shape: %w", err)
		}
		err = s.readTranscript(fh)
		fh.Close()
		if err != nil {
			return nil, fmt.Errorf("read shape %s: %w", f, err)
		}
	}
	return s, nil
}

func (s Shape) readTranscript(r io.Reader) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var rec struct {
			Dir string          `json:"dir"`
			Msg json.RawMessage `json:"msg"`
		}
		if json.Unmarshal(sc.Bytes(), &rec) != nil || rec.Dir != "cli->host" {
			continue
		}
		var m map[string]any
		if json.Unmarshal(rec.Msg, &m) != nil {
			continue // a non-object line (the CLI wrote garbage): not a frame shape
		}
		s.Add(m)
	}
	return sc.Err()
}

// Diff writes the differences between two shapes, both ways: frame kinds
// only in a or only in b, then for kinds in both the fields only in one.
// It returns whether anything differs.
func Diff(w io.Writer, aName string, a Shape, bName string, b Shape) bool {
	differ := false
	onlyKinds := func(x, y Shape) []string {
		var out []string
		for k := range x {
			if _, ok := y[k]; !ok {
				out = append(out, k)
			}
		}
		sort.Strings(out)
		return out
	}
	for _, side := range []struct {
		name string
		x, y Shape
	}{{aName, a, b}, {bName, b, a}} {
		ks := onlyKinds(side.x, side.y)
		fmt.Fprintf(w, "frame kinds only in %s: %d\n", side.name, len(ks))
		for _, k := range ks {
			differ = true
			fmt.Fprintf(w, "  %s\n", k)
		}
	}
	var common []string
	for k := range a {
		if _, ok := b[k]; ok {
			common = append(common, k)
		}
	}
	sort.Strings(common)
	for _, side := range []struct {
		name string
		x, y Shape
	}{{aName, a, b}, {bName, b, a}} {
		fmt.Fprintf(w, "fields only in %s (frame kinds seen in both):\n", side.name)
		n := 0
		for _, k := range common {
			var only []string
			for p := range side.x[k] {
				if side.y[k][p] == nil {
					only = append(only, p)
				}
			}
			if len(only) == 0 {
				continue
			}
			sort.Strings(only)
			differ = true
			n += len(only)
			fmt.Fprintf(w, "  %s: %s\n", k, strings.Join(only, ", "))
		}
		if n == 0 {
			fmt.Fprintf(w, "  (none)\n")
		}
	}
	fmt.Fprintf(w, "fields whose value types differ (%s → %s):\n", aName, bName)
	n := 0
	for _, k := range common {
		var paths []string
		for p, ka := range a[k] {
			if kb := b[k][p]; kb != nil && kinds(ka) != kinds(kb) {
				paths = append(paths, p)
			}
		}
		sort.Strings(paths)
		for _, p := range paths {
			differ = true
			n++
			fmt.Fprintf(w, "  %s: %s: %s → %s\n", k, p, kinds(a[k][p]), kinds(b[k][p]))
		}
	}
	if n == 0 {
		fmt.Fprintf(w, "  (none)\n")
	}
	return differ
}
