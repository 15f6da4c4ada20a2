package agent

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/valyala/fastjson"
)

// FuzzStrictValidation: fastjson.Parser plus strictLexemes accept exactly
// what encoding/json.Valid accepts (nesting deeper than fastjson's 300
// levels aside, which the decoder refuses).
// Run: go test ./agent -run '^$' -fuzz FuzzStrictValidation -fuzztime 60s
func FuzzStrictValidation(f *testing.F) {
	for _, s := range []string{`{"a":"b\u00e9\n","c":[1,-0.5e+3,true,false,null]}`, `01`, `1.`, `-`, `+1`, `NaN`, `nan`, `-inf`,
		`"\x01"`, `"\q"`, `"\u12"`, `1e`, `1.2.3`, `[1,]`, `{"a" :1}`, "\"abcdefgh\\\"ijklmnop\"", `"é"`, `1E+2`, `0x1`, `[nul]`} {
		f.Add([]byte(s))
	}
	for _, ls := range loadTranscriptLines(f) {
		f.Add(ls[0])
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 || depth(line) >= fastjson.MaxDepth {
			return
		}
		var p fastjson.Parser
		_, err := p.ParseBytes(line)
		got := err == nil && strictLexemes(line)
		if want := json.Valid(line); got != want {
			t.Fatalf("parse+lexemes = %v, json.Valid = %v for %q (parse err %v)", got, want, line, err)
		}
	})
}

// depth is an upper bound of line's nesting.
func depth(line []byte) int {
	return bytes.Count(line, []byte("{")) + bytes.Count(line, []byte("["))
}

func TestStrictLexemes(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want bool
	}{
		{`{"a":"plain ascii text over eight bytes","b":1}`, true},
		{"\"tab\tinside\"", false},
		{`"bad \x escape"`, false},
		{`"\ud83d\ude00 ok"`, true},
		{`[0,-1,2.50,1e9,1E-9]`, true},
		{`[00]`, false},
		{`[1.]`, false},
		{`[.5]`, false},
		{`[nan]`, false},
	} {
		if got := strictLexemes([]byte(tc.in)); got != tc.want {
			t.Errorf("strictLexemes(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}
