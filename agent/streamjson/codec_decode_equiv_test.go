package streamjson

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

// sameEvents compares two decodings: DecodeErrors match on their line
// and request id only (the messages differ), everything else exactly.
func sameEvents(a, b []Event) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		da, aErr := a[i].(DecodeError)
		db, bErr := b[i].(DecodeError)
		if aErr || bErr {
			if !aErr || !bErr || !bytes.Equal(da.Line, db.Line) || da.ControlRequestID != db.ControlRequestID {
				return false
			}
			continue
		}
		if !reflect.DeepEqual(a[i], b[i]) {
			return false
		}
	}
	return true
}

// TestDecodeMatchesReference: on every line of the captures the decoder
// gives exactly what the encoding/json decoder it replaced gave.
func TestDecodeMatchesReference(t *testing.T) {
	var dec Decoder
	for file, ls := range loadTranscriptLines(t) {
		for i, l := range ls {
			got, want := dec.Decode(l), stdDecodeLine(l)
			if !sameEvents(got, want) {
				t.Errorf("%s line %d: got\n%#v\nwant\n%#v", file, i, got, want)
			}
		}
	}
}

// FuzzDecodeMatchesReference: on any line the encoding/json decoder
// decodes without error, the decoder agrees with it. Out of scope: keys
// that encoding/json would match ignoring case (any key with an upper-case
// or non-ASCII letter other than the CLI's own camelCase keys) and
// repeated keys.
// Run: go test ./agent/streamjson -run '^$' -fuzz FuzzDecodeMatchesReference -fuzztime 30s
func FuzzDecodeMatchesReference(f *testing.F) {
	for _, ls := range loadTranscriptLines(f) {
		for _, l := range ls[:min(len(ls), 5)] {
			f.Add(l)
		}
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		want := stdDecodeLine(line)
		for _, ev := range want {
			if _, bad := ev.(DecodeError); bad {
				return
			}
		}
		if !json.Valid(bytes.TrimSpace(line)) || hasFoldedOrRepeatedKeys(line) {
			return
		}
		var dec Decoder
		if got := dec.Decode(line); !sameEvents(got, want) {
			t.Fatalf("got\n%#v\nwant\n%#v", got, want)
		}
	})
}

// hasFoldedOrRepeatedKeys reports whether an object in line has a key
// outside the scope of FuzzDecodeMatchesReference.
func hasFoldedOrRepeatedKeys(line []byte) bool {
	d := json.NewDecoder(bytes.NewReader(line))
	type frame struct {
		obj  bool
		keys map[string]bool
		key  bool // next string token is a key
	}
	var stack []*frame
	for {
		tok, err := d.Token()
		if err != nil {
			return false // io.EOF: done (line was checked to be valid)
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{', '[':
				if top != nil && top.obj {
					top.key = true
				}
				stack = append(stack, &frame{obj: v == '{', keys: map[string]bool{}, key: v == '{'})
			default:
				stack = stack[:len(stack)-1]
			}
			continue
		case string:
			if top != nil && top.obj && top.key {
				k := string(bytes.ToLower([]byte(v)))
				if top.keys[k] || (k != v && v != "permissionMode" && v != "isReplay") || !isASCII(v) {
					return true
				}
				top.keys[k] = true
				top.key = false
				continue
			}
		}
		if top != nil && top.obj {
			top.key = true
		}
	}
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
