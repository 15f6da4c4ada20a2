package streamjson

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// fields reads typed values out of a valid line with encoding/json's rules
// for the fields it is asked about: an absent key or a JSON null is the
// zero value, a value of another type is an error (the first one is kept
// in err and later reads return zero values); of repeated keys the last
// counts. Every string and byte slice it returns is a copy: nothing
// aliases the line.
type fields struct {
	err   error
	index *objIndexes
}

// objIndexes caches the members of the objects a line's decoding looks
// at, so that reading several fields of one object scans it once. A
// Decoder keeps it between lines (reset per line).
type objIndexes struct {
	sk   *skim // the line's skim
	objs []indexedObj
	pool [][]member // member slices to reuse
}

type indexedObj struct {
	start *byte
	n     int
	ms    []member
}

const maxIndexedObjs = 8

func (x *objIndexes) reset() {
	for i, o := range x.objs {
		if i > 0 && cap(o.ms) <= maxPooledMembers { // objs[0] is the Decoder's own
			x.pool = append(x.pool, o.ms[:0])
		}
	}
	x.objs = x.objs[:0]
}

// maxPooledMembers is the largest member slice kept for reuse.
const maxPooledMembers = 1024

// membersOf returns o's members, from the cache when o was indexed.
func (x *objIndexes) membersOf(o jval) []member {
	for _, c := range x.objs {
		if c.start == &o[0] && c.n == len(o) {
			return c.ms
		}
	}
	var buf []member
	if n := len(x.pool); n > 0 {
		buf, x.pool = x.pool[n-1], x.pool[:n-1]
	}
	ms := members(o, buf, x.sk)
	if len(x.objs) < maxIndexedObjs {
		x.objs = append(x.objs, indexedObj{start: &o[0], n: len(o), ms: ms})
	}
	return ms
}

// fail records a type error at the dotted path.
func (f *fields) fail(keys []string, want string, got jval) {
	if f.err == nil {
		f.err = fmt.Errorf("field %s: want %s, got %s", strings.Join(keys, "."), want, kindName(got.kind()))
	}
}

// get walks keys through objects. It returns nil when a key is absent or a
// value on the way is null; a non-object on the way is a type error.
func (f *fields) get(v jval, keys ...string) jval {
	for i, k := range keys {
		switch v.kind() {
		case 0, 'n':
			return nil
		case '{':
			v = lookup(f.index.membersOf(v), k)
		default:
			f.fail(keys[:i], "object", v)
			return nil
		}
	}
	if v.kind() == 'n' {
		return nil
	}
	return v
}

// str returns the string at keys.
func (f *fields) str(v jval, keys ...string) string {
	v = f.get(v, keys...)
	switch v.kind() {
	case 0:
		return ""
	case '"':
		return unescape(v[1 : len(v)-1])
	}
	f.fail(keys, "string", v)
	return ""
}

// integer returns the integer at keys (a fraction or exponent is an error,
// as for encoding/json into an int).
func (f *fields) integer(v jval, keys ...string) int64 {
	v = f.get(v, keys...)
	if v.kind() == 0 {
		return 0
	}
	n, err := strconv.ParseInt(string(v), 10, 64)
	if v.kind() != '0' || err != nil {
		f.fail(keys, "integer", v)
		return 0
	}
	return n
}

// float returns the number at keys.
func (f *fields) float(v jval, keys ...string) float64 {
	v = f.get(v, keys...)
	if v.kind() == 0 {
		return 0
	}
	x, err := strconv.ParseFloat(string(v), 64)
	if v.kind() != '0' || err != nil {
		f.fail(keys, "number", v)
		return 0
	}
	return x
}

// boolean returns the bool at keys.
func (f *fields) boolean(v jval, keys ...string) bool {
	v = f.get(v, keys...)
	switch v.kind() {
	case 0, 'f':
		return false
	case 't':
		return true
	}
	f.fail(keys, "bool", v)
	return false
}

// array returns the elements of the array at keys (nil when absent or
// null).
func (f *fields) array(v jval, keys ...string) []jval {
	v = f.get(v, keys...)
	switch v.kind() {
	case 0:
		return nil
	case '[':
		return elements(v, nil, f.index.sk)
	}
	f.fail(keys, "array", v)
	return nil
}

// strs returns the array of strings at keys (nil when absent or null,
// empty for []).
func (f *fields) strs(v jval, keys ...string) []string {
	if f.get(v, keys...) == nil {
		return nil
	}
	a := f.array(v, keys...)
	out := make([]string, len(a))
	for i, e := range a {
		out[i] = f.str(e)
	}
	return out
}

// raw returns a copy of the JSON text of the value at keys, like a
// json.RawMessage field: nil when absent, "null" for null.
func (f *fields) raw(v jval, keys ...string) []byte {
	if len(keys) > 0 {
		parent := f.get(v, keys[:len(keys)-1]...)
		switch parent.kind() {
		case 0:
			return nil
		case '{':
		default:
			f.fail(keys[:len(keys)-1], "object", parent)
			return nil
		}
		v = lookup(f.index.membersOf(parent), keys[len(keys)-1])
	}
	if v == nil {
		return nil
	}
	return bytes.Clone(v)
}

// lookup returns the value of key among ms; of repeated keys the last.
func lookup(ms []member, key string) jval {
	for i := len(ms) - 1; i >= 0; i-- {
		m := &ms[i]
		if string(m.key) == key || m.escaped && unescape(m.key) == key {
			return m.val
		}
	}
	return nil
}
