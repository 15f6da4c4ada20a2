package streamjson

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzValidJSON: validJSON accepts exactly what encoding/json.Valid does.
// Run: go test ./agent/streamjson -run '^$' -fuzz FuzzValidJSON -fuzztime 60s
func FuzzValidJSON(f *testing.F) {
	for _, s := range []string{`{"a":"b\u00e9\n","c":[1,-0.5e+3,true,false,null]}`, `01`, `1.`, `-`, `+1`, `NaN`, `nan`, `-inf`,
		`"\x01"`, `"\q"`, `"\u12"`, `1e`, `1.2.3`, `[1,]`, `{"a" :1}`, "\"abcdefgh\\\"ijklmnop\"", `"é"`, `1E+2`, `0x1`, `[nul]`,
		`{"a":1,}`, `{,}`, `[[]]`, `{"a":{"b":[]}}`, ` [ 1 , 2 ] `, `{"a"}`, `{"a":}`, `[1 2]`, `tru`, `"\\"`, `"\\\""`} {
		f.Add([]byte(s))
	}
	for _, ls := range loadTranscriptLines(f) {
		f.Add(ls[0])
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		if got := validJSON(line); got != json.Valid(line) {
			t.Fatalf("validJSON = %v, json.Valid = %v for %q", got, !got, line)
		}
	})
}

// unescape decodes strings as encoding/json does.
func FuzzUnescape(f *testing.F) {
	for _, s := range []string{`plain`, `a\nb`, `\u00e9`, `\ud83d\ude00`, `\ud800`, `\ud800x`, `\ud800\u0041`, `\udc00\ud800`, "\xff", `\/`, `\\`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, content []byte) {
		quoted := append(append([]byte{'"'}, content...), '"')
		if !json.Valid(quoted) {
			return
		}
		var want string
		if err := json.Unmarshal(quoted, &want); err != nil {
			t.Fatal(err)
		}
		if got := unescape(content); got != want {
			t.Fatalf("unescape(%q) = %q, want %q", content, got, want)
		}
	})
}

func TestSkimMembers(t *testing.T) {
	line := []byte(`{"a": "x\"}" , "b":{"c":[1,{"d":"]"}]}, "e" : null ,"a":2}`)
	var sk skim
	if !sk.validate(line) {
		t.Fatal("not valid")
	}
	ms := members(jval(line), nil, &sk)
	var keys []string
	for _, m := range ms {
		keys = append(keys, string(m.key)+"="+string(m.val))
	}
	want := []string{`a="x\"}"`, `b={"c":[1,{"d":"]"}]}`, `e=null`, `a=2`}
	if b := lookup(ms, "b"); string(members(b, nil, &sk)[0].val) != `[1,{"d":"]"}]` {
		t.Errorf("nested members of %s", b)
	}
	if len(keys) != len(want) {
		t.Fatalf("members %q", keys)
	}
	for i := range want {
		if keys[i] != want[i] {
			t.Errorf("member %d = %s, want %s", i, keys[i], want[i])
		}
	}
	arr := []byte(`[ 1 ,"a,b" ,[2,3], {} ]`)
	if !sk.validate(arr) {
		t.Fatal("not valid")
	}
	els := elements(jval(arr), nil, &sk)
	if len(els) != 4 || string(els[1]) != `"a,b"` || string(els[2]) != `[2,3]` || !bytes.Equal(els[3], []byte(`{}`)) {
		t.Errorf("elements %q", els)
	}
}
