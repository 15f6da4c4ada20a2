package streamjson

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"
)

// FuzzDecodeLine: Decoder.Decode never panics, and its results respect the
// contract: a non-JSON line yields exactly one DecodeError, DecodeError
// lines are capped, Raw fields are copies of the input.
// Run: go test ./agent/streamjson -run '^$' -fuzz FuzzDecodeLine -fuzztime 30s
func FuzzDecodeLine(f *testing.F) {
	// One seed per kind of line in the captures keeps the corpus small.
	seen := map[string]bool{}
	for _, ls := range loadTranscriptLines(f) {
		for _, l := range ls {
			evs := decodeLine(l)
			kind := string(l[:min(len(l), 30)])
			if len(evs) > 0 {
				kind = fmt.Sprintf("%T", evs[0])
			}
			if !seen[kind] && len(l) < 4096 {
				seen[kind] = true
				f.Add(l)
			}
		}
	}
	for _, s := range []string{"", "{}", "null", "[]", `{"type":"system"}`, `{"type":"control_request","request":{}}`,
		`{"type":"user","message":{"content":[{"type":"tool_result","content":[{"type":"text"}]}]}}`,
		`{"type":"result","origin":"x","errors":[{"a":1},"b"]}`, "\xff\xfe"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		orig := bytes.Clone(line)
		evs := decodeLine(line)
		if !bytes.Equal(orig, line) {
			t.Fatal("DecodeLine modified its input")
		}
		trimmed := bytes.TrimSpace(line)
		if len(trimmed) > 0 && !json.Valid(trimmed) {
			if len(evs) != 1 {
				t.Fatalf("invalid JSON gave %d events", len(evs))
			}
			if _, ok := evs[0].(DecodeError); !ok {
				t.Fatalf("invalid JSON gave %T", evs[0])
			}
		}
		for _, ev := range evs {
			switch e := ev.(type) {
			case nil:
				t.Fatal("nil event")
			case DecodeError:
				if len(e.Line) > decodeErrorLineMax || e.Err == nil {
					t.Fatalf("bad DecodeError %d bytes, err %v", len(e.Line), e.Err)
				}
			case Unknown:
				if !bytes.Equal(e.Raw, trimmed) {
					t.Fatal("Unknown.Raw is not the line")
				}
			}
		}
		// Nothing returned may alias the input buffer.
		for i := range line {
			line[i] ^= 0xff
		}
		for _, ev := range evs {
			if u, ok := ev.(Unknown); ok && !bytes.Equal(u.Raw, bytes.TrimSpace(orig)) {
				t.Fatal("Unknown.Raw aliases the input")
			}
			if de, ok := ev.(DecodeError); ok && !bytes.HasPrefix(bytes.TrimSpace(orig), de.Line) {
				t.Fatal("DecodeError.Line aliases the input")
			}
		}
	})
}
