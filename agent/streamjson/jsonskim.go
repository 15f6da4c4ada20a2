package streamjson

import (
	"bytes"
	"slices"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// This file reads stream-json lines without building a tree: validJSON
// checks a whole line in one pass (exactly what encoding/json.Valid
// accepts: FuzzValidJSON), then the decoder reads the few fields an event
// needs straight from the line (jval, objIndex), skipping everything else
// at the speed of bytes.IndexByte. The CLI's bulky lines (system init,
// results, control responses) are mostly fields nobody reads.

// maxJSONDepth is how deep a line may nest (encoding/json's limit).
const maxJSONDepth = 10000

// jval is one JSON value of a valid line: its text, without surrounding
// whitespace. nil means absent.
type jval []byte

// kind is the JSON type of v by its first byte: '{', '[', '"', 't'
// (true), 'f', 'n' (null), '0' (a number); 0 for absent.
func (v jval) kind() byte {
	if len(v) == 0 {
		return 0
	}
	switch c := v[0]; c {
	case '{', '[', '"', 't', 'f', 'n':
		return c
	default:
		return '0'
	}
}

// kindName names a kind for errors.
func kindName(k byte) string {
	switch k {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "bool"
	case 'n':
		return "null"
	case '0':
		return "number"
	}
	return "nothing"
}

// validJSON reports whether b is one valid JSON value (surrounding JSON
// whitespace allowed), as encoding/json.Valid does.
func validJSON(b []byte) bool {
	var s skim
	return s.validate(b)
}

// maxEndsLine is the longest line whose containers' ends are recorded.
const maxEndsLine = 1 << 20

// skim is a Decoder's reading state for one line, reused between lines:
// validate's scratch, the line's own members and where its containers end.
type skim struct {
	line   []byte
	stack  []byte  // open containers
	starts []int32 // their start indexes
	ends   []int32 // ends[i]: index after the container starting at line[i] (lines up to maxEndsLine)
	top    []member
}

// validate is validJSON that also remembers b's members (when b is an
// object) and where each of its containers ends, for the reads that
// follow (members, elements).
func (sk *skim) validate(b []byte) bool {
	sk.line, sk.top = b, sk.top[:0]
	stack, starts, top := sk.stack[:0], sk.starts[:0], sk.top
	ends := sk.ends[:0]
	if len(b) <= maxEndsLine {
		ends = slices.Grow(ends, len(b))[:len(b)]
	}
	defer func() { sk.stack, sk.starts, sk.ends, sk.top = stack, starts, ends, top }()
	var key []byte // the top-level member being read
	valStart := 0
	i := skipWS(b, 0)
	// Each step reads one value; after it, separators and closers.
	for {
		if i >= len(b) {
			return false
		}
		switch c := b[i]; {
		case c == '{' || c == '[':
			if len(stack) >= maxJSONDepth {
				return false
			}
			stack, starts = append(stack, c), append(starts, int32(i))
			i = skipWS(b, i+1)
			if i < len(b) && (c == '{' && b[i] == '}' || c == '[' && b[i] == ']') {
				if ends != nil {
					ends[starts[len(starts)-1]] = int32(i + 1)
				}
				stack, starts = stack[:len(stack)-1], starts[:len(starts)-1]
				i++
				break
			}
			if c == '{' {
				var (
					k  []byte
					ok bool
				)
				if i, k, ok = objectKey(b, i); !ok {
					return false
				}
				if len(stack) == 1 {
					key, valStart = k, i
				}
			}
			continue
		case c == '"':
			j, ok := scanString(b, i+1)
			if !ok {
				return false
			}
			i = j
		case c == '-' || c >= '0' && c <= '9':
			j, ok := scanNumber(b, i)
			if !ok {
				return false
			}
			i = j
		case c == 't' && bytes.HasPrefix(b[i:], []byte("true")):
			i += 4
		case c == 'f' && bytes.HasPrefix(b[i:], []byte("false")):
			i += 5
		case c == 'n' && bytes.HasPrefix(b[i:], []byte("null")):
			i += 4
		default:
			return false
		}
		// After a value: close containers, or a comma and the next member.
		for {
			end := i
			i = skipWS(b, i)
			if len(stack) == 0 {
				return i == len(b)
			}
			if i >= len(b) {
				return false
			}
			open := stack[len(stack)-1]
			if len(stack) == 1 && open == '{' && (b[i] == ',' || b[i] == '}') {
				top = append(top, newMember(key, b[valStart:end]))
			}
			switch {
			case b[i] == ',':
				i = skipWS(b, i+1)
				if open == '{' {
					var (
						k  []byte
						ok bool
					)
					if i, k, ok = objectKey(b, i); !ok {
						return false
					}
					if len(stack) == 1 {
						key, valStart = k, i
					}
				}
			case open == '{' && b[i] == '}' || open == '[' && b[i] == ']':
				if ends != nil {
					ends[starts[len(starts)-1]] = int32(i + 1)
				}
				stack, starts = stack[:len(stack)-1], starts[:len(starts)-1]
				i++
				continue
			default:
				return false
			}
			break
		}
	}
}

// objectKey reads `"key" :` at b[i] and returns the index of the value
// and the key's raw text.
func objectKey(b []byte, i int) (int, []byte, bool) {
	if i >= len(b) || b[i] != '"' {
		return i, nil, false
	}
	j, ok := scanString(b, i+1)
	if !ok {
		return j, nil, false
	}
	key := b[i+1 : j-1]
	j = skipWS(b, j)
	if j >= len(b) || b[j] != ':' {
		return j, nil, false
	}
	return skipWS(b, j+1), key, true
}

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// release drops what a long line left behind, so that an idle Decoder
// does not keep it (the line itself is not the skim's).
func (sk *skim) release() {
	sk.line = nil
	if cap(sk.top) > maxPooledMembers {
		sk.top = nil
	}
	if cap(sk.ends) > maxEndsLine/4 || cap(sk.stack) > maxPooledMembers {
		sk.ends, sk.stack, sk.starts = nil, nil, nil
	}
}

// skipValue returns the index after the value at b[i], a part of the line
// sk validated: a container's end is looked up, the rest scanned.
func (sk *skim) skipValue(b []byte, i int) int {
	if c := b[i]; (c == '{' || c == '[') && sk != nil {
		if base := cap(sk.line) - cap(b); base >= 0 && base+i < len(sk.ends) {
			if e := int(sk.ends[base+i]); e > base+i {
				return e - base
			}
		}
	}
	return skipValue(b, i)
}

// skipValue returns the index after the value at b[i] of a valid line.
func skipValue(b []byte, i int) int {
	switch b[i] {
	case '"':
		return skipString(b, i+1)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i = skipString(b, i+1)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return i
	default: // number or literal
		for i < len(b) {
			switch b[i] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return i
			}
			i++
		}
		return i
	}
}

// skipString returns the index after the closing quote of the string whose
// content starts at b[i] (the line is valid).
func skipString(b []byte, i int) int {
	for end := min(i+16, len(b)); i < end; i++ { // short strings byte by byte
		if c := b[i]; c == '"' {
			return i + 1
		} else if c == '\\' {
			break
		}
	}
	for {
		q := bytes.IndexByte(b[i:], '"')
		if q < 0 {
			return len(b)
		}
		end := i + q
		n := 0 // backslashes right before the quote
		for k := end - 1; k >= i && b[k] == '\\'; k-- {
			n++
		}
		if n%2 == 0 {
			return end + 1
		}
		i = end + 1
	}
}

// member is one key of an object and its value.
type member struct {
	key     []byte // raw key text
	val     jval
	escaped bool // key has escapes: compare it unescaped
}

func newMember(key []byte, val jval) member {
	return member{key: key, val: val, escaped: bytes.IndexByte(key, '\\') >= 0}
}

// members appends the members of object o (a valid '{' value; sk, if not
// nil, the skim of its line) to dst.
func members(o jval, dst []member, sk *skim) []member {
	i := skipWS(o, 1)
	for i < len(o) && o[i] == '"' {
		end := skipString(o, i+1)
		key := o[i+1 : end-1]
		i = skipWS(o, end)
		i = skipWS(o, i+1) // ':'
		vEnd := sk.skipValue(o, i)
		dst = append(dst, newMember(key, o[i:vEnd]))
		i = skipWS(o, vEnd)
		if i < len(o) && o[i] == ',' {
			i = skipWS(o, i+1)
		}
	}
	return dst
}

// elements appends the elements of array a (a valid '[' value; sk, if not
// nil, the skim of its line) to dst.
func elements(a jval, dst []jval, sk *skim) []jval {
	i := skipWS(a, 1)
	for i < len(a) && a[i] != ']' {
		end := sk.skipValue(a, i)
		dst = append(dst, a[i:end])
		i = skipWS(a, end)
		if i < len(a) && a[i] == ',' {
			i = skipWS(a, i+1)
		}
	}
	return dst
}

// unescape returns the value of a JSON string's content (without quotes),
// as encoding/json decodes it: escapes resolved, invalid UTF-8 bytes and
// unpaired surrogates replaced by U+FFFD.
func unescape(raw []byte) string {
	if bytes.IndexByte(raw, '\\') < 0 {
		if utf8.Valid(raw) {
			return string(raw)
		}
		return replaceInvalid(raw, nil)
	}
	out := make([]byte, 0, len(raw))
	for i := 0; i < len(raw); {
		c := raw[i]
		if c != '\\' {
			if c < utf8.RuneSelf {
				out = append(out, c)
				i++
				continue
			}
			r, n := utf8.DecodeRune(raw[i:])
			if r == utf8.RuneError && n == 1 {
				out = utf8.AppendRune(out, utf8.RuneError)
			} else {
				out = append(out, raw[i:i+n]...)
			}
			i += n
			continue
		}
		switch e := raw[i+1]; e {
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r := hex4(raw[i+2:])
			i += 6
			if utf16.IsSurrogate(r) {
				r2 := rune(-1)
				if i+6 <= len(raw) && raw[i] == '\\' && raw[i+1] == 'u' {
					r2 = hex4(raw[i+2:])
				}
				if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
					out = utf8.AppendRune(out, dec)
					i += 6
					continue
				}
				r = utf8.RuneError
			}
			out = utf8.AppendRune(out, r)
			continue
		default: // '"', '\\', '/'
			out = append(out, e)
		}
		i += 2
	}
	return string(out)
}

// replaceInvalid returns raw with each byte that is not valid UTF-8
// replaced by U+FFFD.
func replaceInvalid(raw, out []byte) string {
	for len(raw) > 0 {
		r, n := utf8.DecodeRune(raw)
		if r == utf8.RuneError && n == 1 {
			out = utf8.AppendRune(out, utf8.RuneError)
		} else {
			out = append(out, raw[:n]...)
		}
		raw = raw[n:]
	}
	return string(out)
}

func hex4(b []byte) rune {
	n, _ := strconv.ParseUint(string(b[:4]), 16, 16)
	return rune(n)
}
