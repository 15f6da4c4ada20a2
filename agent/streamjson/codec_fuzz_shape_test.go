package streamjson

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
)

// wireVersion is the CLI whose captures (testdata/wire/<version>, written
// by cmd/clicheck) FuzzTurnSurvivesUnknownShapes mutates: the pinned one.
const wireVersion = "2.1.332"

// FuzzTurnSurvivesUnknownShapes: what a later CLI may change without
// notice — frames of unknown types (also unknown control requests), unknown
// fields at any depth with nested values, unknown content blocks, optional
// fields gone — never changes what a host makes of a turn. It mutates the
// CLI→host frames of a real capture, driven by the fuzzer's bytes, and
// checks that the decoded turn is the same: the top-level assistant text,
// the results (text, error flag) and the permission requests; that no
// line becomes undecodable; and that every unknown control request is an
// Unknown whose request id ControlRequestID finds, so the session answers
// it with an error instead of leaving the CLI waiting.
//
// Run: go test ./agent/streamjson -run '^$' -fuzz FuzzTurnSurvivesUnknownShapes -fuzztime 10m -parallel 1
func FuzzTurnSurvivesUnknownShapes(f *testing.F) {
	caps := loadWireCaptures(f)
	// Seeds: per capture, no change and a few pseudo-random series of
	// decisions (fixed, so plain `go test` runs them all every time).
	rng := rand.New(rand.NewPCG(43, 332))
	for i := range caps {
		f.Add(uint8(i), []byte{})
		for range 6 {
			ops := make([]byte, 600)
			for j := range ops {
				ops[j] = byte(rng.Uint32())
			}
			f.Add(uint8(i), ops)
		}
	}
	f.Fuzz(func(t *testing.T, pick uint8, ops []byte) {
		c := caps[int(pick)%len(caps)]
		want := turnOf(t, c.lines, nil)
		r := &fuzzBytes{b: ops}
		var mutated [][]byte
		var injected []string // request ids of the unknown control requests added
		for i, l := range c.lines {
			for r.next()%5 == 0 && len(mutated) < 4*len(c.lines) { // extra frames of unknown kinds
				frame, id := unknownFrame(r, i)
				mutated = append(mutated, frame)
				if id != "" {
					injected = append(injected, id)
				}
			}
			mutated = append(mutated, mutateFrame(t, r, l))
		}
		got := turnOf(t, mutated, injected)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: the mutated frames changed the turn\n got  %+v\n want %+v", c.name, got, want)
		}
	})
}

// capture is one transcript's CLI→host frames.
type capture struct {
	name  string
	lines [][]byte
}

func loadWireCaptures(tb testing.TB) []capture {
	tb.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "wire", wireVersion, "transcript-*.jsonl"))
	if err != nil || len(files) == 0 {
		tb.Fatalf("no captures in testdata/wire/%s (err %v)", wireVersion, err)
	}
	sort.Strings(files)
	var caps []capture
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		c := capture{name: filepath.Base(f)}
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			var tl transcriptLine
			if err := json.Unmarshal(sc.Bytes(), &tl); err != nil {
				tb.Fatalf("%s: %v", f, err)
			}
			if tl.Dir == "cli->host" && len(tl.Msg) > 0 && tl.Msg[0] == '{' {
				c.lines = append(c.lines, bytes.Clone(tl.Msg))
			}
		}
		caps = append(caps, c)
	}
	return caps
}

// turn is what a host makes of a turn's frames.
type turn struct {
	Text        []string // top-level assistant text blocks
	Results     []string // "text|is_error"
	Permissions []string // request ids
}

// turnOf decodes lines with one Decoder (as a session does), failing on
// an undecodable line and on an injected control request the session could
// not answer.
func turnOf(t *testing.T, lines [][]byte, injected []string) turn {
	t.Helper()
	var d Decoder
	var out turn
	var unknownIDs []string
	for _, l := range lines {
		for _, ev := range d.Decode(l) {
			switch e := ev.(type) {
			case AssistantText:
				if e.ParentToolUseID == "" {
					out.Text = append(out.Text, e.Text)
				}
			case Result:
				out.Results = append(out.Results, fmt.Sprintf("%s|%v", e.Text, e.IsError))
			case PermissionRequest:
				out.Permissions = append(out.Permissions, e.RequestID)
			case DecodeError:
				t.Fatalf("a frame became undecodable: %v: %.300s", e.Err, l)
			case Unknown:
				if e.Type == "control_request" {
					unknownIDs = append(unknownIDs, ControlRequestID(e.Raw))
				}
			}
		}
	}
	for _, id := range injected {
		if !slices.Contains(unknownIDs, id) {
			t.Fatalf("unknown control request %s was not reported with its id (got %q): the CLI would wait on it", id, unknownIDs)
		}
	}
	return out
}

// fuzzBytes hands out the fuzzer's bytes as decisions (0 once used up).
type fuzzBytes struct {
	b []byte
	i int
}

func (r *fuzzBytes) next() byte {
	if r.i >= len(r.b) {
		return 0
	}
	r.i++
	return r.b[r.i-1]
}

// keptKeys are the members a turn's text, results and permission requests
// come from, or that say which kind a frame or block is: deleting one is
// not a missing optional field but another frame.
var keptKeys = map[string]bool{"type": true, "subtype": true, "result": true, "is_error": true, "message": true, "content": true,
	"text": true, "parent_tool_use_id": true, "request": true, "request_id": true}

// turnKinds are the frame types a turn's outcome is read from: never
// renamed to an unknown type.
var turnKinds = map[string]bool{"result": true, "assistant": true, "control_request": true}

// mutateFrame applies up to three changes chosen by r to one frame.
func mutateFrame(t *testing.T, r *fuzzBytes, line []byte) []byte {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("capture line: %v", err)
	}
	for range r.next() % 4 {
		switch op := r.next() % 6; op {
		case 0: // an unknown field, somewhere in the frame
			o := pickObject(r, m)
			o[fmt.Sprintf("zz_fuzz_%d", r.next())] = junk(r, 3)
		case 1: // an optional field gone
			o := pickObject(r, m)
			keys := make([]string, 0, len(o))
			for k := range o {
				if !keptKeys[k] {
					keys = append(keys, k)
				}
			}
			if len(keys) > 0 {
				sort.Strings(keys)
				delete(o, keys[int(r.next())%len(keys)])
			}
		case 2: // an unknown frame type
			if typ, _ := m["type"].(string); !turnKinds[typ] {
				m["type"] = "zz_" + typ
			}
		case 3: // an unknown system subtype or stream event
			switch m["type"] {
			case "system":
				m["subtype"] = fmt.Sprintf("zz_fuzz_%d", r.next())
			case "stream_event":
				if e, ok := m["event"].(map[string]any); ok {
					e["type"] = fmt.Sprintf("zz_fuzz_%d", r.next())
				}
			}
		case 4: // an unknown content block
			if msg, ok := m["message"].(map[string]any); ok {
				if blocks, ok := msg["content"].([]any); ok {
					at := int(r.next()) % (len(blocks) + 1)
					msg["content"] = slices.Insert(blocks, at, any(map[string]any{"type": "zz_block", "zz": junk(r, 2)}))
				}
			}
		case 5: // a known field nested deeper under an unknown one
			o := pickObject(r, m)
			o["zz_nest"] = map[string]any{"type": "result", "result": "not this", "message": map[string]any{"content": []any{"x"}}}
		}
	}
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// pickObject walks from m into a nested object chosen by r (m itself when
// r says stop or there is none).
func pickObject(r *fuzzBytes, m map[string]any) map[string]any {
	cur := m
	for depth := 0; depth < 6 && r.next()%3 != 0; depth++ {
		var kids []map[string]any
		keys := make([]string, 0, len(cur))
		for k := range cur {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			switch v := cur[k].(type) {
			case map[string]any:
				kids = append(kids, v)
			case []any:
				for _, e := range v {
					if o, ok := e.(map[string]any); ok {
						kids = append(kids, o)
					}
				}
			}
		}
		if len(kids) == 0 {
			break
		}
		cur = kids[int(r.next())%len(kids)]
	}
	return cur
}

// junk is a JSON value of up to depth levels chosen by r.
func junk(r *fuzzBytes, depth int) any {
	k := r.next() % 7
	if depth <= 0 {
		k %= 4
	}
	switch k {
	case 0:
		return nil
	case 1:
		return strings.Repeat("é\"\\\n<", int(r.next()%4))
	case 2:
		return json.Number(fmt.Sprint(int(r.next()) - 128))
	case 3:
		return r.next()%2 == 0
	case 4, 5:
		o := map[string]any{}
		for range r.next() % 4 {
			o[fmt.Sprintf("k%d", r.next())] = junk(r, depth-1)
		}
		if k == 5 {
			o["type"] = "text" // looks like a block, nowhere a block is read
			o["text"] = "not this"
		}
		return o
	default:
		a := []any{}
		for range r.next() % 4 {
			a = append(a, junk(r, depth-1))
		}
		return a
	}
}

// unknownFrame is a whole frame of a kind the decoder does not know,
// chosen by r; for an unknown control request it also returns its id.
func unknownFrame(r *fuzzBytes, at int) ([]byte, string) {
	var m map[string]any
	id := ""
	switch r.next() % 4 {
	case 0:
		m = map[string]any{"type": fmt.Sprintf("zz_frame_%d", r.next()), "session_id": "s", "payload": junk(r, 3)}
	case 1:
		m = map[string]any{"type": "system", "subtype": fmt.Sprintf("zz_sub_%d", r.next()), "data": junk(r, 3)}
	case 2:
		id = fmt.Sprintf("fuzz-%d-%d", at, r.next())
		m = map[string]any{"type": "control_request", "request_id": id,
			"request": map[string]any{"subtype": fmt.Sprintf("zz_ask_%d", r.next()), "input": junk(r, 3)}}
	default:
		m = map[string]any{"type": "stream_event", "event": map[string]any{"type": "zz_event", "delta": junk(r, 2)}}
	}
	b, err := json.Marshal(m)
	if err != nil {
		panic(err) // plain maps of plain values
	}
	return b, id
}

// TestTurnSurvivesEachMissingField is the systematic part of
// FuzzTurnSurvivesUnknownShapes: in every capture, every optional member
// (at any depth) of every frame a turn is read from (results, assistant
// messages, control requests) is deleted in turn, and the turn must stay
// the same.
func TestTurnSurvivesEachMissingField(t *testing.T) {
	n := 0
	for _, c := range loadWireCaptures(t) {
		want := turnOf(t, c.lines, nil)
		for i, l := range c.lines {
			var m map[string]any
			dec := json.NewDecoder(bytes.NewReader(l))
			dec.UseNumber()
			if err := dec.Decode(&m); err != nil {
				t.Fatal(err)
			}
			if typ, _ := m["type"].(string); !turnKinds[typ] {
				continue
			}
			for _, path := range optionalPaths(m, nil) {
				lines := slices.Clone(c.lines)
				lines[i] = withoutPath(t, l, path)
				n++
				if got := turnOf(t, lines, nil); !reflect.DeepEqual(got, want) {
					t.Errorf("%s line %d without %s: turn %+v, want %+v", c.name, i+1, strings.Join(path, "."), got, want)
				}
			}
		}
	}
	if n < 100 {
		t.Fatalf("only %d deletions tried: the captures lack turns", n)
	}
}

// optionalPaths lists the paths of v's object members whose key is not in
// keptKeys (through arrays by index, written "#i").
func optionalPaths(v any, prefix []string) [][]string {
	var out [][]string
	switch x := v.(type) {
	case map[string]any:
		for k, c := range x {
			p := append(slices.Clone(prefix), k)
			if !keptKeys[k] {
				out = append(out, p)
			}
			out = append(out, optionalPaths(c, p)...)
		}
	case []any:
		for i, c := range x {
			out = append(out, optionalPaths(c, append(slices.Clone(prefix), fmt.Sprintf("#%d", i)))...)
		}
	}
	sort.Slice(out, func(i, j int) bool { return strings.Join(out[i], ".") < strings.Join(out[j], ".") })
	return out
}

// withoutPath returns line with the member at path deleted.
func withoutPath(t *testing.T, line []byte, path []string) []byte {
	t.Helper()
	var m any
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		t.Fatal(err)
	}
	cur := m
	for _, k := range path[:len(path)-1] {
		switch x := cur.(type) {
		case map[string]any:
			cur = x[k]
		case []any:
			var i int
			fmt.Sscanf(k, "#%d", &i)
			cur = x[i]
		}
	}
	delete(cur.(map[string]any), path[len(path)-1])
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
