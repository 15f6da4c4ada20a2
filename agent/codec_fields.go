package agent

import (
	"bytes"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/valyala/fastjson"
)

// fields reads typed values out of a parsed line with encoding/json's
// rules for the fields it is asked about: an absent key or a JSON null is
// the zero value, a value of another type is an error (the first one is
// kept in err and later reads return zero values). Every string and byte
// slice it returns is a copy: nothing aliases the parser's memory.
type fields struct {
	err error
	buf *[]byte // scratch for raw, kept by the Decoder
}

// fail records a type error at the dotted path.
func (f *fields) fail(keys []string, want string, got *fastjson.Value) {
	if f.err == nil {
		f.err = fmt.Errorf("field %s: want %s, got %s", strings.Join(keys, "."), want, got.Type())
	}
}

// get walks keys through objects. It returns nil when a key is absent or a
// value on the way is null; a non-object on the way is a type error.
func (f *fields) get(v *fastjson.Value, keys ...string) *fastjson.Value {
	for i, k := range keys {
		if v == nil {
			return nil
		}
		switch v.Type() {
		case fastjson.TypeNull:
			return nil
		case fastjson.TypeObject:
			v = v.Get(k)
		default:
			f.fail(keys[:i], "object", v)
			return nil
		}
	}
	if v != nil && v.Type() == fastjson.TypeNull {
		return nil
	}
	return v
}

// str returns the string at keys.
func (f *fields) str(v *fastjson.Value, keys ...string) string {
	v = f.get(v, keys...)
	if v == nil {
		return ""
	}
	b, err := v.StringBytes()
	if err != nil {
		f.fail(keys, "string", v)
		return ""
	}
	return validString(b)
}

// integer returns the integer at keys (a fraction or exponent is an error,
// as for encoding/json into an int).
func (f *fields) integer(v *fastjson.Value, keys ...string) int64 {
	v = f.get(v, keys...)
	if v == nil {
		return 0
	}
	n, err := v.Int64()
	if err != nil {
		f.fail(keys, "integer", v)
		return 0
	}
	return n
}

// float returns the number at keys.
func (f *fields) float(v *fastjson.Value, keys ...string) float64 {
	v = f.get(v, keys...)
	if v == nil {
		return 0
	}
	x, err := v.Float64()
	if err != nil {
		f.fail(keys, "number", v)
		return 0
	}
	return x
}

// boolean returns the bool at keys.
func (f *fields) boolean(v *fastjson.Value, keys ...string) bool {
	v = f.get(v, keys...)
	if v == nil {
		return false
	}
	b, err := v.Bool()
	if err != nil {
		f.fail(keys, "bool", v)
	}
	return b
}

// array returns the array at keys (nil when absent or null).
func (f *fields) array(v *fastjson.Value, keys ...string) []*fastjson.Value {
	v = f.get(v, keys...)
	if v == nil {
		return nil
	}
	a, err := v.Array()
	if err != nil {
		f.fail(keys, "array", v)
		return nil
	}
	return a
}

// strs returns the array of strings at keys (nil when absent or null,
// empty for []).
func (f *fields) strs(v *fastjson.Value, keys ...string) []string {
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

// raw returns the JSON text of the value at keys, like a json.RawMessage
// field: nil when absent, "null" for null. The value must not have been
// read before (reading a string unescapes it in place).
func (f *fields) raw(v *fastjson.Value, keys ...string) []byte {
	for _, k := range keys {
		if v == nil || v.Type() != fastjson.TypeObject {
			if v != nil && v.Type() != fastjson.TypeNull {
				f.fail(keys, "object", v)
			}
			return nil
		}
		v = v.Get(k)
	}
	if v == nil {
		return nil
	}
	return f.marshal(v)
}

// marshal returns a copy of v's JSON text (see raw).
func (f *fields) marshal(v *fastjson.Value) []byte {
	if f.buf == nil {
		return v.MarshalTo(nil)
	}
	*f.buf = v.MarshalTo((*f.buf)[:0])
	out := bytes.Clone(*f.buf)
	if cap(*f.buf) > scratchKeepCap {
		*f.buf = nil
	}
	return out
}

// scratchKeepCap is the largest scratch buffer a Decoder keeps.
const scratchKeepCap = 1 << 20

// validString copies b into a string, replacing each byte that is not
// valid UTF-8 with U+FFFD, as encoding/json does. (Unlike encoding/json,
// an escaped lone UTF-16 surrogate such as \ud800 stays as its escape
// text: JSON.stringify writes those only for broken strings.)
func validString(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	var sb strings.Builder
	sb.Grow(len(b) + 8)
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if r == utf8.RuneError && n == 1 {
			sb.WriteRune(utf8.RuneError)
		} else {
			sb.Write(b[:n])
		}
		b = b[n:]
	}
	return sb.String()
}
